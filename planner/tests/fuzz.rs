//! Token soup and random bytes never panic the CQL parser, and it always finishes.

use proptest::prelude::*;

const VOCAB: &[&str] = &[
    "cql(",
    "cql()",
    "cql(variations)",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    "#",
    "~",
    "&",
    "|",
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "==",
    "<",
    ">=",
    "->",
    "<-",
    "--",
    "[x]",
    "×",
    "=Q",
    "~~",
    "\\1",
    "not",
    "and",
    "or",
    "if",
    "then",
    "else",
    "check",
    "mate",
    "K",
    "q",
    "A",
    "a",
    "_",
    ".",
    "e4",
    "a-h1-8",
    "[Aa]",
    "Ra-h7",
    "N[a1-8,h1-8]",
    "attacks",
    "attackedby",
    "up",
    "1",
    "7",
    "0",
    "power",
    "light",
    "dark",
    "rank",
    "between",
    "ray",
    "xray",
    "pin",
    "from",
    "through",
    "to",
    "legal",
    "countmoves",
    "currentmove",
    "move",
    "child",
    "parent",
    "position",
    "ancestor",
    "find",
    "<--",
    "all",
    "quiet",
    "square",
    "piece",
    "in",
    "X",
    "Y",
    "function",
    "F",
    "while",
    "dictionary",
    "D",
    "comment",
    "str",
    "player",
    "white",
    "black",
    "result",
    "1-0",
    "tag",
    "\"FEN\"",
    "\"x\"",
    "flipcolor",
    "echo",
    "path",
    "sort",
    "min",
    "local",
    "unbind",
    "o-o",
    "castle",
    "enpassant",
    "makesquare",
    "max",
    ",",
    "//c\n",
    "/*c*/",
    "\"",
    "♔",
    "□",
    "∙",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(0..VOCAB.len(), 0..40), glue in prop::collection::vec(any::<bool>(), 40)) {
        let mut src = String::from("cql() ");
        for (i, w) in words.iter().enumerate() {
            src.push_str(VOCAB[*w]);
            if glue[i % glue.len()] {
                src.push(' ');
            }
        }
        if let Err(e) = cqldb_planner::parse(&src) {
            prop_assert!(e.span.start <= src.len() + 1);
            let _ = e.line_col(&src);
            let _ = format!("{:?}", e.report("fuzz", &src));
        }
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = cqldb_planner::parse(&s);
        let _ = cqldb_planner::parse(&format!("cql() {s}"));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!("cql() {}check{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(cqldb_planner::parse(&src).is_err());
    let src = format!("cql() {}check", "not ".repeat(100_000));
    assert!(cqldb_planner::parse(&src).is_err());
    let src = format!("cql() {}", "#~".repeat(100_000));
    assert!(cqldb_planner::parse(&src).is_err());
}
