//! Chess scalar functions.
//!
//! | function | value |
//! |---|---|
//! | `fen(game, position)` | the position's FEN |
//! | `san(game, position)` | the move that reached the position, in SAN (NULL at the root) |
//! | `material(game, position)` | the material signature, as the `positions.material` column |
//! | `on_square(bitboard, 'e4')` | whether the bitboard (a `positions` piece column) has that square: `WHERE on_square(white_king, 'g1')` |
//!
//! The first three read the game from the database (once per game in a batch); over
//! `positions` the columns `fen` and `material` are cheaper.

use std::collections::HashMap;
use std::sync::Arc;

use cqldb_storage::Database;
use datafusion::arrow::array::{ArrayRef, AsArray, BooleanArray, StringArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::decode::{Decoded, decode};
use crate::provider::df_error;

/// What a per-position function computes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Of {
    Fen,
    San,
    Material,
}

/// `fen`, `san` or `material` of (game, position).
struct PositionFn {
    of: Of,
    db: Arc<Database>,
    signature: Signature,
}

impl std::fmt::Debug for PositionFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PositionFn({:?})", self.of)
    }
}

impl PartialEq for PositionFn {
    fn eq(&self, other: &Self) -> bool {
        self.of == other.of && Arc::ptr_eq(&self.db, &other.db)
    }
}
impl Eq for PositionFn {}
impl std::hash::Hash for PositionFn {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.of.hash(state);
    }
}

impl ScalarUDFImpl for PositionFn {
    fn name(&self) -> &str {
        match self.of {
            Of::Fen => "fen",
            Of::San => "san",
            Of::Material => "material",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let (games, ids) = (
            arrays[0].as_primitive::<Int64Type>(),
            arrays[1].as_primitive::<Int64Type>(),
        );
        let mut wanted: Vec<u64> = games
            .iter()
            .flatten()
            .filter(|&g| g >= 1)
            .map(|g| g as u64)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let decoded: HashMap<u64, Decoded> = decode(&self.db, &wanted, false)
            .map_err(df_error)?
            .into_iter()
            .map(|d| (d.game.number, d))
            .collect();
        let out: StringArray = games
            .iter()
            .zip(ids.iter())
            .map(|(g, id)| {
                let d = decoded.get(&u64::try_from(g?).ok()?)?;
                let id = u32::try_from(id?).ok()?;
                let p = d.game.positions.get(id as usize)?;
                match self.of {
                    Of::Fen => Some(p.fen()),
                    Of::Material => Some(crate::tables::positions::material(p)),
                    Of::San => cqldb_executor::rows::san_to(&d.game, id),
                }
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(out) as ArrayRef))
    }
}

/// `on_square(bitboard, 'e4')`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct OnSquare {
    signature: Signature,
}

impl ScalarUDFImpl for OnSquare {
    fn name(&self) -> &str {
        "on_square"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let boards = arrays[0].as_primitive::<UInt64Type>();
        let squares = arrays[1].as_string::<i32>();
        let mut out = Vec::with_capacity(boards.len());
        for (b, s) in boards.iter().zip(squares.iter()) {
            let (Some(b), Some(s)) = (b, s) else {
                out.push(None);
                continue;
            };
            let sq: shakmaty::Square = s.trim().parse().map_err(|_| {
                DataFusionError::Execution(format!("on_square: '{s}' is not a square (a1..h8)"))
            })?;
            out.push(Some(b >> u32::from(sq) & 1 == 1));
        }
        Ok(ColumnarValue::Array(Arc::new(BooleanArray::from(out))))
    }
}

/// Every chess function over `db`.
pub fn all(db: &Arc<Database>) -> Vec<ScalarUDF> {
    let per_position = |of| {
        ScalarUDF::new_from_impl(PositionFn {
            of,
            db: db.clone(),
            signature: Signature::exact(vec![DataType::Int64, DataType::Int64], Volatility::Stable),
        })
    };
    vec![
        per_position(Of::Fen),
        per_position(Of::San),
        per_position(Of::Material),
        ScalarUDF::new_from_impl(OnSquare {
            signature: Signature::exact(
                vec![DataType::UInt64, DataType::Utf8],
                Volatility::Immutable,
            ),
        }),
    ]
}
