"""The example queries of docs/scale-out.md, written once for cqldb, DuckDB and Spark SQL.

Each query reads the tables of docs/sql.md by their bare names (games, tags, positions, moves,
comments). cqldb runs it on the live database; DuckDB and Spark run it on views over the Parquet
export (DIR/<table>/**/*.parquet). The text is plain SQL that the three dialects (DataFusion,
DuckDB, Spark SQL 4 with ANSI mode) read alike:

- decades are `year - year % 10`, since `/` on integers divides exactly in DataFusion but gives a
  fraction in DuckDB and Spark;
- averages are cast to DOUBLE, since DuckDB and Spark keep DECIMAL for decimal literals;
- every ORDER BY that the comparison relies on is a total order (ties broken by a unique key),
  with NULLS LAST written out where a key can be NULL (the engines differ on the default);
- grouping uses ordinals (GROUP BY 1, 2), which all three accept;
- q4 carries Spark's join hint `/*+ BROADCAST(h) */`: Spark cannot tell that the positions with
  one Zobrist key are few and otherwise shuffles the whole moves table for a sort-merge join
  (17 s against 3.6 s on the 11.4 M-position export); DataFusion and DuckDB read it as a comment.

`DIALECT` holds per-engine replacements of a whole query when one is needed; it is empty now.
"""

from dataclasses import dataclass

# Zobrist key of the position after 1.e4 c5 (White to move, no en passant capture possible),
# as cqldb computes it (shakmaty's keys). It is below 2^63, so the literal is a BIGINT in every
# dialect; Spark reads the UInt64 column as DECIMAL(20,0) and compares exactly.
SICILIAN_ZOBRIST = 7227515431820872427


@dataclass(frozen=True)
class Query:
    name: str
    title: str
    sql: str
    # True when the answer's order is part of the answer (ORDER BY with a total order, often
    # with LIMIT); otherwise rows are compared as a multiset.
    ordered: bool
    # The tables the query reads, to turn times into rows per second.
    tables: tuple


QUERIES = [
    Query(
        "q1a_results_by_decade",
        "Games per result and per decade",
        """
SELECT result, year - year % 10 AS decade, count(*) AS games
FROM games
GROUP BY 1, 2
""",
        False,
        ("games",),
    ),
    Query(
        "q1b_top_eco_by_decade",
        "The three most frequent ECO codes of each decade",
        """
SELECT decade, eco, games
FROM (
  SELECT decade, eco, games,
         row_number() OVER (PARTITION BY decade ORDER BY games DESC, eco) AS rk
  FROM (
    SELECT year - year % 10 AS decade, eco, count(*) AS games
    FROM games
    WHERE year IS NOT NULL AND eco IS NOT NULL
    GROUP BY 1, 2
  ) per_eco
) ranked
WHERE rk <= 3
""",
        False,
        ("games",),
    ),
    Query(
        "q2_black_wins",
        "The players with the most wins with the black pieces",
        """
SELECT black AS player, count(*) AS wins
FROM games
WHERE result = '0-1' AND black IS NOT NULL
GROUP BY 1
ORDER BY 2 DESC, 1
LIMIT 10
""",
        True,
        ("games",),
    ),
    Query(
        "q3a_length_by_result",
        "Average game length (plies of the main line) by result",
        """
SELECT result, count(*) AS games, CAST(avg(plies) AS DOUBLE) AS avg_plies
FROM games
GROUP BY 1
""",
        False,
        ("games",),
    ),
    Query(
        "q3b_longest_games",
        "The longest games",
        """
SELECT game, white, black, result, year, plies
FROM games
ORDER BY plies DESC, game
LIMIT 10
""",
        True,
        ("games",),
    ),
    Query(
        "q4_tree_after_e4_c5",
        "Opening tree after 1.e4 c5 (the position anywhere in the tree, by Zobrist key): "
        "each next move, its games and White's score",
        f"""
WITH here AS (
  SELECT DISTINCT game, position FROM positions WHERE zobrist = {SICILIAN_ZOBRIST}
), nxt AS (
  SELECT /*+ BROADCAST(h) */ DISTINCT m.game, m.san
  FROM here h JOIN moves m ON m.game = h.game AND m.parent = h.position
)
SELECT n.san, count(*) AS games,
       avg(CAST(CASE g.result WHEN '1-0' THEN 1 WHEN '1/2-1/2' THEN 0.5 WHEN '0-1' THEN 0 END
                AS DOUBLE)) AS white_score
FROM nxt n JOIN games g ON g.game = n.game
GROUP BY 1
ORDER BY 2 DESC, 1
""",
        True,
        ("positions", "moves", "games"),
    ),
    Query(
        "q5_bishops_vs_knights_by_year",
        "Main-line positions where White has two bishops and no knight against Black's two "
        "knights and no bishop, per year",
        """
SELECT g.year, count(*) AS positions, count(DISTINCT p.game) AS games
FROM positions p JOIN games g ON g.game = p.game
WHERE p.mainline
  AND length(p.material) - length(replace(p.material, 'B', '')) = 2
  AND length(p.material) - length(replace(p.material, 'N', '')) = 0
  AND length(p.material) - length(replace(p.material, 'n', '')) = 2
  AND length(p.material) - length(replace(p.material, 'b', '')) = 0
GROUP BY 1
""",
        False,
        ("positions", "games"),
    ),
    Query(
        "q6a_mates_by_player",
        "Mates delivered on the main line, per player (the side not to move in the mate)",
        """
SELECT CASE WHEN p.wtm THEN g.black ELSE g.white END AS player, count(*) AS mates
FROM positions p JOIN games g ON g.game = p.game
WHERE p.mate AND p.mainline
GROUP BY 1
ORDER BY 2 DESC, 1 NULLS LAST
LIMIT 10
""",
        True,
        ("positions", "games"),
    ),
    Query(
        "q6b_underpromotions_by_year",
        "Underpromotions (to knight, bishop or rook; any line of the tree) per year and piece",
        """
SELECT g.year, lower(m.promotion) AS piece, count(*) AS moves
FROM moves m JOIN games g ON g.game = m.game
WHERE lower(m.promotion) IN ('n', 'b', 'r')
GROUP BY 1, 2
""",
        False,
        ("moves", "games"),
    ),
]

# engine -> query name -> replacement SQL. Kept empty unless a dialect needs its own text.
DIALECT = {"cqldb": {}, "duckdb": {}, "spark": {}}


def sql_for(engine, query):
    return DIALECT.get(engine, {}).get(query.name, query.sql).strip()
