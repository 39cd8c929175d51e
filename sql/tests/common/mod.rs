//! What the SQL tests share: an answer as text.

use cqldb_sql::SqlSession;
use datafusion::arrow::util::display::array_value_to_string;

/// The answer's rows as text cells, in the answer's order (a failed statement panics with it).
pub fn cells(s: &SqlSession, sql: &str) -> Vec<Vec<String>> {
    let answer = s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    let mut out = Vec::new();
    for b in &answer.batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| array_value_to_string(c, r).unwrap_or_default())
                    .collect(),
            );
        }
    }
    out
}

/// Every row as `a|b|c`, sorted (SQL promises no order without ORDER BY).
#[allow(dead_code)] // not every test file compares unordered answers
pub fn rows(s: &SqlSession, sql: &str) -> Vec<String> {
    let mut out: Vec<String> = cells(s, sql).into_iter().map(|r| r.join("|")).collect();
    out.sort();
    out
}
