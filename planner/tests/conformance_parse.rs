//! Every query of the conformance suite parses (or, in `errors/`, is rejected with a span).

fn queries() -> Vec<(String, String, String)> {
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/conformance/cql/queries");
    let mut out = Vec::new();
    let areas = match std::fs::read_dir(&root) {
        Ok(areas) => areas,
        Err(e) => panic!("conformance suite not found at {}: {e}", root.display()),
    };
    for area in areas.flatten() {
        let area_name = area.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(area.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            out.push((
                area_name.clone(),
                f.file_name().to_string_lossy().into_owned(),
                text,
            ));
        }
    }
    out.sort();
    out
}

/// Areas the parser must accept completely (the CQL part 1 issue's list).
const REQUIRED: [&str; 14] = [
    "attacks",
    "geometry",
    "legal",
    "logic",
    "moves",
    "numeric",
    "pieces",
    "pin",
    "setops",
    "status",
    "tags",
    "tree",
    "varheader",
    "vars",
];

#[test]
fn required_areas_parse() {
    let mut failures = Vec::new();
    for (area, name, text) in queries() {
        if !REQUIRED.contains(&area.as_str()) {
            continue;
        }
        if let Err(e) = cqldb_planner::parse(&text) {
            let (l, c) = e.line_col(&text);
            failures.push(format!("{area}/{name}:{l}:{c}: {}", e.message));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_queries_are_rejected_with_a_span() {
    let mut failures = Vec::new();
    for (area, name, text) in queries() {
        if area != "errors" {
            continue;
        }
        match cqldb_planner::parse(&text) {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err(e) => {
                assert!(e.span.start <= text.len(), "{name}: span outside the text");
                eprintln!("{name}: {:?} {}", e.line_col(&text), e.message);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
