//! The bundled sample of real games (see `sample/SOURCES.md`), compiled into the binary so
//! `cqldb demo` works from any directory.

/// (file name, contents) of every sample file.
pub const SAMPLE: [(&str, &[u8]); 4] = [
    (
        "immortal-games.pgn",
        include_bytes!("../sample/immortal-games.pgn"),
    ),
    (
        "beautiful-chess-studies-1.pgn",
        include_bytes!("../sample/beautiful-chess-studies-1.pgn"),
    ),
    (
        "repertoire-tree.pgn",
        include_bytes!("../sample/repertoire-tree.pgn"),
    ),
    ("dortmund.pgn", include_bytes!("../sample/dortmund.pgn")),
];
