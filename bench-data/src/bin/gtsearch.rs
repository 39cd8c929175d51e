//! Runs the logging searcher on EPD positions and writes one `.gtf` search tree per iteration:
//! `gtsearch lct2.epd OUT_DIR [MAX_DEPTH] [FIRST LAST]` (positions counted from 1).

use std::io::BufWriter;
use std::time::Instant;

use cqldb_bench_data::search::{ALIASES, FIELDS, Searcher, epd_position};
use gtlog::Logger;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gtsearch EPD OUT_DIR [MAX_DEPTH] [FIRST LAST]");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1])?;
    let out = std::path::Path::new(&args[2]);
    std::fs::create_dir_all(out)?;
    let max_depth: i32 = args.get(3).map_or(Ok(5), |s| s.parse())?;
    let first: usize = args.get(4).map_or(Ok(1), |s| s.parse())?;
    let last: usize = args.get(5).map_or(Ok(usize::MAX), |s| s.parse())?;
    println!("position,id,depth,nodes,seconds,best,value");
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if n < first || n > last || line.trim().is_empty() {
            continue;
        }
        let Some((pos, id)) = epd_position(line) else {
            eprintln!("line {n}: not a position");
            continue;
        };
        for depth in 1..=max_depth {
            let path = out.join(format!("pos{n:02}-d{depth}.gtf"));
            let file = BufWriter::new(std::fs::File::create(&path)?);
            let log = Logger::new(file, cqldb_bench_data::search::ENGINE, &ALIASES, &FIELDS)?;
            // A fresh table per iteration keeps each logged tree a plain function of its depth.
            let mut s = Searcher::new(log, 20);
            let t = Instant::now();
            let r = s.search(&pos, depth)?;
            let (log, nodes) = s.into_log();
            log.finish()?;
            println!(
                "{n},{id},{depth},{nodes},{:.3},{},{}",
                t.elapsed().as_secs_f64(),
                r.best.map_or("-".to_owned(), |m| m.to_string()),
                r.value
            );
        }
    }
    Ok(())
}
