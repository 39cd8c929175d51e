#!/usr/bin/env python3
"""Lay out a month-partitioned export as docs/scale-out.md describes, from one PGN input.

    monthly_export.py --pgn FILE [FILE...] --months 3 --work WORK --export OUT

The games of the inputs (plain or .zst/.gz/.bz2 PGN) are cut, in order, into --months parts of
about the same number of games, standing for consecutive months (--first 2026-01, then
2026-02, ...). Each part is indexed into its own database WORK/db-<month>, as a month's archive
would be, and exported with `cqldb export`; its files are moved to
OUT/<table>/month=<month>/seg-<id>.parquet, the hive layout that Spark, DuckDB, DataFusion and
Polars read as one table with a `month` column. WORK/all is one database of all the parts in
order, the reference that scaleout_compare.py checks the partitioned export against:

    scaleout_compare.py --db WORK/all --export OUT
"""

import argparse
import bz2
import gzip
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scaleout_compare import TABLES, find_cqldb  # noqa: E402


def open_text(path):
    if path.endswith(".zst"):
        p = subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE)
        return p.stdout, p
    if path.endswith(".gz"):
        return gzip.open(path, "rb"), None
    if path.endswith(".bz2"):
        return bz2.open(path, "rb"), None
    return open(path, "rb"), None


def games(paths):
    """Each game's bytes, in order: a game starts at a tag line after a movetext or a gap."""
    for path in paths:
        f, proc = open_text(path)
        cur, in_moves = [], False
        for line in f:
            if line.startswith(b"[") and (in_moves or not cur):
                if cur and in_moves:
                    yield b"".join(cur)
                    cur = []
                in_moves = False
            elif line.strip() and not line.startswith(b"["):
                in_moves = True
            cur.append(line)
        if cur:
            yield b"".join(cur)
        if proc:
            proc.wait()


def month_names(first, n):
    y, m = map(int, first.split("-"))
    out = []
    for _ in range(n):
        out.append(f"{y:04d}-{m:02d}")
        m += 1
        if m > 12:
            y, m = y + 1, 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--pgn", nargs="+", required=True)
    ap.add_argument("--months", type=int, default=3)
    ap.add_argument("--first", default="2026-01")
    ap.add_argument("--work", required=True, help="folder for the parts and the databases")
    ap.add_argument("--export", required=True, help="the partitioned export (new)")
    ap.add_argument("--cqldb", default="")
    args = ap.parse_args()
    cqldb = find_cqldb(args.cqldb)
    if os.path.exists(args.export) and os.listdir(args.export):
        sys.exit(f"{args.export} is not empty")
    os.makedirs(args.work, exist_ok=True)

    total = sum(1 for _ in games(args.pgn))
    months = month_names(args.first, args.months)
    per = -(-total // args.months)
    parts = [os.path.join(args.work, f"month={m}.pgn") for m in months]
    outs = [open(p, "wb") for p in parts]
    for i, g in enumerate(games(args.pgn)):
        outs[i // per].write(g if g.endswith(b"\n\n") else g + b"\n")
    for o in outs:
        o.close()
    print(f"{total} games cut into {args.months} parts of up to {per}")

    timings = []
    for m, part in zip(months, parts):
        db = os.path.join(args.work, f"db-{m}")
        tmp = os.path.join(args.work, f"export-{m}")
        for d in (db, tmp):
            shutil.rmtree(d, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run([cqldb, "index", "-q", "--db", db, part], check=True)
        t1 = time.perf_counter()
        subprocess.run([cqldb, "export", "-q", "--db", db, "--parquet", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        t2 = time.perf_counter()
        for t in TABLES:
            src = os.path.join(tmp, t)
            if not os.path.isdir(src):
                continue
            dst = os.path.join(args.export, t, f"month={m}")
            os.makedirs(dst, exist_ok=True)
            for name in sorted(os.listdir(src)):
                shutil.move(os.path.join(src, name), os.path.join(dst, name))
        shutil.rmtree(tmp)
        timings.append((m, t1 - t0, t2 - t1))
        print(f"month={m}: index {t1 - t0:.2f} s, export {t2 - t1:.2f} s", flush=True)

    ref = os.path.join(args.work, "all")
    shutil.rmtree(ref, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([cqldb, "index", "-q", "--db", ref] + parts, check=True)
    print(f"reference database {ref} (all parts, in order): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
