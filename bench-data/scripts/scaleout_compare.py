#!/usr/bin/env python3
"""Run the example queries of docs/scale-out.md through cqldb, DuckDB and Spark and compare.

    scaleout_compare.py --db DB --export DIR [--engines cqldb,duckdb,spark] [--runs N]

- cqldb: `cqldb sql "..." --db DB --format csv` on the live database (one process per run, so
  its times include the start of the process and the opening of the database).
- duckdb: the `duckdb` Python package over views `read_parquet('DIR/<table>/**/*.parquet')`.
- spark: PySpark in local[N] mode (default N = 2) over `spark.read.parquet('DIR/<table>')`,
  which discovers hive partitions (DIR/<table>/month=2026-01/...) by itself.

The export is DIR/<table>/<file>.parquet, as written by `cqldb export --db DB --parquet DIR`, or
DIR/<table>/month=YYYY-MM/<file>.parquet, one cqldb database per month (monthly_export.py writes
one). In the second case the views give each game the number it has in DB, taken to hold the
months in order: the month's offset (the games of the earlier months) plus its own number. With --make-export and no DIR yet, the script writes it:
through `cqldb export` when the binary has that command, otherwise one
`cqldb sql "SELECT * FROM <table>" --format parquet` per table (DIR/<table>/part-0.parquet).

Answers are compared cell by cell after normalising: NULL and the empty string are the same
(cqldb's CSV cannot tell them apart), booleans are true/false, numbers compare as numbers with a
relative tolerance of 1e-9 (DECIMAL from Spark, DOUBLE elsewhere). Queries whose order is part of
the answer (a total ORDER BY) are compared in order, the others as multisets. The reference is
the first engine in --engines. Exit status 1 on any mismatch or failed query.

Needs nothing but Python 3 for the cqldb engine; `duckdb` and `pyspark` (with a Java runtime)
for the others (bench-data/scripts/install-scaleout.sh installs them). Not part of CI.
"""

import argparse
import csv
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from example_queries import QUERIES, sql_for  # noqa: E402

TABLES = ["games", "tags", "positions", "moves", "comments"]
REL_TOL = 1e-9


# ---------------------------------------------------------------------------------------------
# the export


def find_cqldb(explicit):
    if explicit:
        return explicit
    if os.environ.get("CQLDB"):
        return os.environ["CQLDB"]
    found = shutil.which("cqldb")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in ("../../target/release/cqldb",):
        cand = os.path.normpath(os.path.join(here, rel))
        if os.path.exists(cand):
            return cand
    sys.exit("no cqldb binary: pass --cqldb PATH or set CQLDB")


def has_export_command(cqldb):
    r = subprocess.run([cqldb, "export", "--help"], capture_output=True, text=True)
    return r.returncode == 0 and "--parquet" in r.stdout


def make_export(cqldb, db, out):
    t0 = time.perf_counter()
    if has_export_command(cqldb):
        cmd = [cqldb, "export", "--db", db, "--parquet", out]
        print("export:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        how = "cqldb export"
    else:
        for t in TABLES:
            os.makedirs(os.path.join(out, t), exist_ok=True)
            target = os.path.join(out, t, "part-0.parquet")
            cmd = [cqldb, "sql", f"SELECT * FROM {t}", "--db", db, "--format", "parquet",
                   "-o", target]
            print("export:", " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        how = "cqldb sql SELECT * per table"
    return how, time.perf_counter() - t0


def parquet_files(export, table):
    """Every .parquet file under DIR/<table>, sorted (any depth: hive folders included)."""
    root = os.path.join(export, table)
    files = []
    for dirpath, _dirs, names in os.walk(root):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".parquet")]
    return sorted(files)


def partition_column(export):
    """'month' when the export is partitioned as DIR/<table>/month=.../, else None."""
    root = os.path.join(export, "games")
    if os.path.isdir(root):
        for name in os.listdir(root):
            if name.startswith("month=") and os.path.isdir(os.path.join(root, name)):
                return "month"
    return None


# In a partitioned export every month is its own database, with games numbered from 1. The views
# number them as one database holding the months in order would: the month's offset (the games
# of the earlier months) plus its own number.
OFFSETS_SQL = """SELECT {part}, coalesce(sum(n) OVER (ORDER BY {part}
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
               AS game_offset
FROM (SELECT {part}, max(game) AS n FROM raw_games GROUP BY 1) per_month"""


def export_stats(export):
    """Files, bytes and rows per table; compressed bytes per column of positions (DuckDB)."""
    stats = {"tables": {}, "positions_columns": None, "rows_from": None}
    try:
        import duckdb
        con = duckdb.connect()
        stats["rows_from"] = "parquet footers (duckdb)"
    except ImportError:
        con = None
    for t in TABLES:
        files = parquet_files(export, t)
        size = sum(os.path.getsize(f) for f in files)
        rows = None
        if con is not None and files:
            rows = con.execute(
                "SELECT sum(num_rows) FROM parquet_file_metadata(?)", [files]).fetchone()[0]
            rows = int(rows) if rows is not None else 0
        stats["tables"][t] = {"files": len(files), "bytes": size, "rows": rows}
    if con is not None and parquet_files(export, "positions"):
        cols = con.execute(
            "SELECT path_in_schema, sum(total_compressed_size) FROM parquet_metadata(?) "
            "GROUP BY 1 ORDER BY 2 DESC", [parquet_files(export, "positions")]).fetchall()
        stats["positions_columns"] = [(c, int(b)) for c, b in cols]
    return stats


def print_export_stats(stats):
    print("\n## Export")
    print(f"{'table':<10} {'files':>6} {'bytes':>14} {'rows':>14} {'bytes/row':>10}")
    total = 0
    for t, s in stats["tables"].items():
        total += s["bytes"]
        rows = s["rows"]
        per = f"{s['bytes'] / rows:.2f}" if rows else "-"
        print(f"{t:<10} {s['files']:>6} {s['bytes']:>14,} "
              f"{(f'{rows:,}' if rows is not None else '?'):>14} {per:>10}")
    print(f"{'total':<10} {'':>6} {total:>14,}")
    games = stats["tables"]["games"]["rows"]
    positions = stats["tables"]["positions"]["rows"]
    if games and positions:
        print(f"bytes per game (all tables): {total / games:.1f}; "
              f"bytes per position (all tables): {total / positions:.2f}; "
              f"positions table alone: {stats['tables']['positions']['bytes'] / positions:.2f} "
              f"bytes/position; positions per game: {positions / games:.1f}")
    cols = stats["positions_columns"]
    if cols and positions:
        fen = sum(b for c, b in cols if c == "fen")
        colsum = sum(b for _, b in cols)
        print(f"positions columns, compressed bytes/position: "
              + ", ".join(f"{c} {b / positions:.2f}" for c, b in cols[:8])
              + f"; without fen {(colsum - fen) / positions:.2f}")


# ---------------------------------------------------------------------------------------------
# engines


class Cqldb:
    name = "cqldb"

    def __init__(self, cqldb, db):
        self.cqldb, self.db = cqldb, db
        self.setup_seconds = 0.0

    def run(self, sql):
        r = subprocess.run([self.cqldb, "sql", sql, "--db", self.db, "--format", "csv"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip() or f"exit {r.returncode}")
        rows = list(csv.reader(io.StringIO(r.stdout)))
        return rows[0] if rows else [], [tuple(x) for x in rows[1:]]

    def close(self):
        pass


class DuckDB:
    name = "duckdb"

    def __init__(self, export, threads):
        import duckdb
        t0 = time.perf_counter()
        self.con = duckdb.connect()
        self.con.execute(f"SET threads = {threads}")
        part = partition_column(export)
        for t in TABLES:
            files = parquet_files(export, t)
            if not files:
                continue
            glob = os.path.join(export, t, "**", "*.parquet").replace("'", "''")
            src = (f"read_parquet('{glob}', hive_partitioning = true, "
                   f"union_by_name = true)")
            if not part:
                self.con.execute(f"CREATE VIEW {t} AS SELECT * FROM {src}")
                continue
            self.con.execute(f"CREATE VIEW raw_{t} AS SELECT * FROM {src}")
            if t == "games":
                self.con.execute("CREATE VIEW game_offsets AS " + OFFSETS_SQL.format(part=part))
            self.con.execute(
                f"CREATE VIEW {t} AS SELECT r.* EXCLUDE (game), r.game + o.game_offset AS game "
                f"FROM raw_{t} r JOIN game_offsets o USING ({part})")
        self.setup_seconds = time.perf_counter() - t0

    def run(self, sql):
        cur = self.con.execute(sql)
        header = [d[0] for d in cur.description]
        return header, cur.fetchall()

    def close(self):
        self.con.close()


class Spark:
    name = "spark"

    def __init__(self, export, threads, memory):
        t0 = time.perf_counter()
        from pyspark.sql import SparkSession
        self.spark = (
            SparkSession.builder.master(f"local[{threads}]")
            .appName("cqldb-scaleout")
            .config("spark.driver.memory", memory)
            .config("spark.sql.shuffle.partitions", str(max(2, 2 * threads)))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        self.start_seconds = time.perf_counter() - t0
        part = partition_column(export)
        raw = {}
        for t in TABLES:
            if parquet_files(export, t):
                raw[t] = self.spark.read.parquet(os.path.join(export, t))
        if part and "games" in raw:
            from pyspark.sql.functions import broadcast, col
            raw["games"].createOrReplaceTempView("raw_games")
            offsets = self.spark.sql(OFFSETS_SQL.format(part=part))
            offsets = broadcast(offsets.cache())
            for t, df in raw.items():
                raw[t] = (df.join(offsets, part)
                          .withColumn("game", col("game") + col("game_offset"))
                          .drop("game_offset"))
        for t, df in raw.items():
            df.createOrReplaceTempView(t)
        self.setup_seconds = time.perf_counter() - t0

    def run(self, sql):
        df = self.spark.sql(sql)
        rows = df.collect()
        return list(df.columns), [tuple(r) for r in rows]

    def close(self):
        self.spark.stop()


# ---------------------------------------------------------------------------------------------
# comparison


def canon(v):
    """One form for a cell from any engine: None, 'true'/'false', int, float or str."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return v
    if isinstance(v, (float, Decimal)):
        f = float(v)
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    s = str(v)
    if s == "":
        return None
    if s in ("true", "false"):
        return s
    try:
        return int(s)
    except ValueError:
        pass
    try:
        f = float(s)
        if math.isfinite(f) and any(c in s for c in ".eE"):
            return int(f) if f.is_integer() and abs(f) < 2**53 else f
    except ValueError:
        pass
    return s


def sort_key(row):
    key = []
    for v in row:
        if v is None:
            key.append((0, ""))
        elif isinstance(v, (int, float)):
            key.append((1, float(f"{float(v):.9g}")))
        else:
            key.append((2, v))
    return key


def cells_equal(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    return a == b


def compare(ref, got, ordered):
    """None when equal, else a short description of the first difference."""
    ref = [tuple(canon(v) for v in r) for r in ref]
    got = [tuple(canon(v) for v in r) for r in got]
    if len(ref) != len(got):
        missing = [r for r in ref if r not in got][:3]
        extra = [r for r in got if r not in ref][:3]
        return f"{len(ref)} rows expected, {len(got)} got; missing {missing}; extra {extra}"
    if not ordered:
        ref, got = sorted(ref, key=sort_key), sorted(got, key=sort_key)
    for i, (a, b) in enumerate(zip(ref, got)):
        if len(a) != len(b) or not all(cells_equal(x, y) for x, y in zip(a, b)):
            return f"row {i}: expected {a}, got {b}"
    return None


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="the cqldb database the export was made from")
    ap.add_argument("--export", required=True, help="export folder: DIR/<table>/*.parquet")
    ap.add_argument("--engines", default="cqldb,duckdb,spark",
                    help="comma-separated; the first is the reference")
    ap.add_argument("--queries", default="", help="comma-separated query names (default all)")
    ap.add_argument("--runs", type=int, default=1, help="runs per query; the median is shown")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads, Spark local[N]")
    ap.add_argument("--spark-memory", default="4g", help="spark.driver.memory")
    ap.add_argument("--cqldb", default="", help="the cqldb binary (default $CQLDB, PATH)")
    ap.add_argument("--make-export", action="store_true",
                    help="write the export first when DIR has no Parquet file")
    ap.add_argument("--show", type=int, default=0, help="print the first N rows of each answer")
    ap.add_argument("--json", default="", help="write times, sizes and answers to this file")
    args = ap.parse_args()

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ("cqldb", "duckdb", "spark"):
            sys.exit(f"unknown engine {e}")
    queries = QUERIES
    if args.queries:
        wanted = set(args.queries.split(","))
        queries = [q for q in QUERIES if q.name in wanted or q.name.split("_")[0] in wanted]

    cqldb = find_cqldb(args.cqldb)
    report = {"db": args.db, "export": args.export, "engines": engines, "runs": args.runs}
    if args.make_export and not any(parquet_files(args.export, t) for t in TABLES):
        how, secs = make_export(cqldb, args.db, args.export)
        report["export_made"] = {"how": how, "seconds": secs}
        print(f"export written by {how} in {secs:.2f} s")

    stats = export_stats(args.export)
    report["export_stats"] = stats
    print_export_stats(stats)
    table_rows = {t: (s["rows"] or 0) for t, s in stats["tables"].items()}

    results = {}  # engine -> query -> dict
    setup = {}
    failures = 0
    for e in engines:
        print(f"\n## {e}", flush=True)
        try:
            if e == "cqldb":
                eng = Cqldb(cqldb, args.db)
            elif e == "duckdb":
                eng = DuckDB(args.export, args.threads)
            else:
                eng = Spark(args.export, args.threads, args.spark_memory)
        except Exception as exc:  # noqa: BLE001
            print(f"{e}: cannot start: {exc}")
            failures += 1
            continue
        setup[e] = eng.setup_seconds
        if e == "spark":
            print(f"spark session {eng.start_seconds:.2f} s, views {eng.setup_seconds:.2f} s")
        results[e] = {}
        for q in queries:
            sql = sql_for(e, q)
            times, header, rows, err = [], None, None, None
            for _ in range(max(1, args.runs)):
                t0 = time.perf_counter()
                try:
                    header, rows = eng.run(sql)
                except Exception as exc:  # noqa: BLE001
                    err = str(exc).strip().splitlines()[0][:300]
                    break
                times.append(time.perf_counter() - t0)
            r = {"times": times, "header": header, "rows": rows, "error": err}
            results[e][q.name] = r
            if err:
                print(f"{q.name}: ERROR {err}")
            else:
                print(f"{q.name}: {len(rows)} rows, {statistics.median(times):.3f} s", flush=True)
                for row in (rows or [])[: args.show]:
                    print("   ", row)
        eng.close()

    # comparison against the reference
    ref_engine = next((e for e in engines if e in results), None)
    mismatches = []
    print("\n## Answers")
    for q in queries:
        ref = results.get(ref_engine, {}).get(q.name)
        for e in engines:
            r = results.get(e, {}).get(q.name)
            if r is None:
                continue
            if r["error"]:
                mismatches.append((q.name, e, "error: " + r["error"]))
                continue
            if e == ref_engine or ref is None or ref["error"]:
                continue
            diff = compare(ref["rows"], r["rows"], q.ordered)
            if diff:
                mismatches.append((q.name, e, diff))
    if mismatches:
        for name, e, diff in mismatches:
            print(f"MISMATCH {name} [{e} vs {ref_engine}]: {diff}")
    else:
        print(f"all {len(queries)} queries give the same answers on {', '.join(results)}")

    # times
    print("\n## Times (seconds, median of runs)")
    head = f"{'query':<32} {'rows':>6}" + "".join(f" {e:>10}" for e in results)
    print(head)
    for q in queries:
        ref = results.get(ref_engine, {}).get(q.name)
        nrows = len(ref["rows"]) if ref and ref["rows"] is not None else "-"
        line = f"{q.name:<32} {nrows:>6}"
        for e in results:
            r = results[e].get(q.name)
            line += f" {statistics.median(r['times']):>10.3f}" if r and r["times"] else \
                f" {'error':>10}"
        print(line)
    line = f"{'setup (session, views)':<32} {'':>6}"
    for e in results:
        line += f" {setup.get(e, 0.0):>10.3f}"
    print(line)

    print("\n## Input rows per second (rows of the tables a query reads / its time)")
    print(f"{'query':<32} {'input rows':>12}" + "".join(f" {e:>12}" for e in results))
    for q in queries:
        n = sum(table_rows.get(t, 0) for t in q.tables)
        line = f"{q.name:<32} {n:>12,}"
        for e in results:
            r = results[e].get(q.name)
            if r and r["times"]:
                line += f" {n / max(statistics.median(r['times']), 1e-9):>12,.0f}"
            else:
                line += f" {'-':>12}"
        print(line)

    if args.json:
        out = dict(report)
        out["setup_seconds"] = setup
        out["mismatches"] = mismatches
        out["results"] = {
            e: {n: {"times": r["times"], "error": r["error"], "header": r["header"],
                    "rows": [[canon(v) for v in row] for row in (r["rows"] or [])]}
                for n, r in qs.items()}
            for e, qs in results.items()}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)

    sys.exit(1 if (mismatches or failures) else 0)


if __name__ == "__main__":
    main()
