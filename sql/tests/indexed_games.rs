//! The `games` columns read from the index (no game decoded) against the same columns read from
//! the decoded games, on generated games with odd tags: results that are none of the four
//! spellings, missing or repeated tags, years and ratings outside 0..=65535 or of 0, ECO tags
//! that are not codes, games with and without variations, over several segments.

use std::sync::Arc;

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_sql::{SqlOptions, SqlSession};
use cqldb_storage::{Database, DbWriter, WriterOptions};
use proptest::prelude::*;

mod common;
use common::cells;

/// Every column the index gives (see `sql/src/tables/indexed_games.rs`).
const INDEXED: &str = "game, result, year, white_elo, black_elo, eco, plies, positions, \
                       variations, source_file, source_line, errors";

const RESULTS: &[&str] = &["1-0", "0-1", "1/2-1/2", "*", " 1-0", "½-½", "?", ""];
const DATES: &[&str] = &[
    "1851.06.21",
    "????.??.??",
    "0000.01.01",
    "-500.??.??",
    "99999.1.1",
    "2024",
    "19",
    "+123.1.1",
];
const ELOS: &[&str] = &[
    "2700", "0", "-0", "+5", "70000", " 2500 ", "abc", "65535", "99", "-12", "100", "",
];
const ECOS: &[&str] = &[
    "B33", "B33a", " C21", "Z99", "B+3", "e44", "A0", "E99", "A00",
];
const MOVES: &[&str] = &[
    "1. e4 e5 2. Nf3 Nc6",
    "1. d4 (1. e4 e5) 1... d5 2. c4",
    "1. e4 c5 (1... e5 2. Nf3 (2. f4 exf4) 2... Nc6) 2. Nf3 d6",
    "",
    "1. f3 e5 2. g4 Qh4#",
    "1. e4 e5 2. Qxe5",
];

/// One tag: absent, or one or two values from its pool (a repeated tag: the first counts).
fn tag(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(pool), 0..=2)
}

#[derive(Debug, Clone)]
struct GameSpec {
    result: Vec<&'static str>,
    date: Vec<&'static str>,
    event_date: bool,
    white_elo: Vec<&'static str>,
    black_elo: Vec<&'static str>,
    eco: Vec<&'static str>,
    moves: &'static str,
    termination: &'static str,
}

fn game() -> impl Strategy<Value = GameSpec> {
    (
        tag(RESULTS),
        tag(DATES),
        any::<bool>(),
        tag(ELOS),
        tag(ELOS),
        tag(ECOS),
        prop::sample::select(MOVES),
        prop::sample::select(&["1-0", "0-1", "1/2-1/2", "*"][..]),
    )
        .prop_map(
            |(result, date, event_date, white_elo, black_elo, eco, moves, termination)| GameSpec {
                result,
                date,
                event_date,
                white_elo,
                black_elo,
                eco,
                moves,
                termination,
            },
        )
}

fn pgn(games: &[GameSpec]) -> String {
    let mut out = String::new();
    for (i, g) in games.iter().enumerate() {
        out.push_str(&format!("[White \"W{i}\"]\n"));
        let mut put = |name: &str, values: &[&str]| {
            for v in values {
                out.push_str(&format!("[{name} \"{v}\"]\n"));
            }
        };
        put("Result", &g.result);
        put("Date", &g.date);
        if g.event_date {
            put("EventDate", &["1999.01.01"]);
        }
        put("WhiteElo", &g.white_elo);
        put("BlackElo", &g.black_elo);
        put("ECO", &g.eco);
        out.push_str(&format!("\n{} {}\n\n", g.moves, g.termination));
    }
    out
}

fn session(text: &str, dir: &std::path::Path) -> SqlSession {
    let pgn = dir.join("g.pgn");
    std::fs::write(&pgn, text).unwrap();
    // Small segments: a scan crosses several, and the index is read per segment.
    let opts = WriterOptions {
        segment_positions: 40,
        ..WriterOptions::default()
    };
    let mut writer = DbWriter::open(&dir.join("db"), opts).unwrap();
    ingest(
        &[Input::Path(pgn)],
        &mut writer,
        IngestOptions::default(),
        &Progress::default(),
    )
    .unwrap();
    writer.commit().unwrap();
    let db = Arc::new(Database::open(&dir.join("db")).unwrap());
    SqlSession::with_options(
        db,
        SqlOptions {
            pushdown: true,
            threads: 2,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The indexed columns read from the index, and read from the decoded games (asking for
/// `white` too makes the scan decode every game).
fn both_ways(s: &SqlSession, filter: &str) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let indexed = cells(
        s,
        &format!("SELECT {INDEXED} FROM games {filter} ORDER BY game"),
    );
    let mut decoded = cells(
        s,
        &format!("SELECT {INDEXED}, white FROM games {filter} ORDER BY game"),
    );
    for row in &mut decoded {
        row.pop();
    }
    (indexed, decoded)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_index_gives_the_decoded_games_values(games in prop::collection::vec(game(), 1..30)) {
        let tmp = tempfile::tempdir().unwrap();
        let s = session(&pgn(&games), tmp.path());
        let (indexed, decoded) = both_ways(&s, "");
        prop_assert_eq!(indexed.len(), games.len());
        prop_assert_eq!(&indexed, &decoded);
        // A pushed filter: the index reads only the candidate games.
        let (indexed, decoded) = both_ways(&s, "WHERE result = '1-0' OR game % 3 = 0");
        prop_assert_eq!(indexed, decoded);
    }
}

/// Each column on one game whose values the index cannot hold, and on one whose it can.
#[test]
fn odd_values_are_read_from_the_text() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[Result \"½-½\"]\n[Date \"-500.??.??\"]\n[WhiteElo \"0\"]\n[BlackElo \"70000\"]\n\
                [ECO \"B33a\"]\n\n1. e4 (1. d4) 1... e5 1/2-1/2\n\n\
                [Result \"0-1\"]\n[Date \"1999.??.??\"]\n[WhiteElo \"2500\"]\n[ECO \"Z99\"]\n\n\
                1. f3 e5 2. g4 Qh4# 0-1\n";
    let s = session(text, tmp.path());
    let got = cells(
        &s,
        "SELECT result, year, white_elo, black_elo, eco, plies, variations FROM games ORDER BY game",
    );
    let want = [
        ["½-½", "-500", "0", "70000", "B33", "2", "1"],
        ["0-1", "1999", "2500", "", "", "4", "0"],
    ];
    assert_eq!(got, want.map(|r| r.map(str::to_owned).to_vec()));
}
