//! Writes synthetic PGN games with variations to stdout (or a file), for load tests.
//!
//! `synth-pgn --games 100000 --seed 7 > big.pgn`

use std::io::{BufWriter, Write};

use cqldb_bench_data::synth::{Generator, SynthOptions};

fn main() -> std::io::Result<()> {
    let mut games = 1000u64;
    let mut seed = 1u64;
    let mut options = SynthOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        match a.as_str() {
            "--games" => games = parse(&value("--games")),
            "--seed" => seed = parse(&value("--seed")),
            "--max-plies" => options.max_plies = parse(&value("--max-plies")),
            "--variation-rate" => options.variation_rate = parse(&value("--variation-rate")),
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let mut generator = Generator::new(seed, options);
    let mut out = BufWriter::new(std::io::stdout().lock());
    for _ in 0..games {
        out.write_all(generator.game().pgn.as_bytes())?;
    }
    out.flush()
}

fn parse<T: std::str::FromStr>(s: &str) -> T {
    s.parse()
        .unwrap_or_else(|_| usage(&format!("not a valid number: {s}")))
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("synth-pgn: {msg}");
    }
    eprintln!(
        "usage: synth-pgn [--games N] [--seed S] [--max-plies N] [--variation-rate P] > out.pgn"
    );
    std::process::exit(if msg.is_empty() { 0 } else { 2 })
}
