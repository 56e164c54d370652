#!/usr/bin/env python3
"""Fleet questions over blescope's flat tables, on DuckDB (embedded, the default) or on Apache Spark at scale.

    python3 scripts/spark_fleet.py --duckdb DIR                     the five questions over `blescope export --tables DIR`
    python3 scripts/spark_fleet.py --blescope PATH --files LIST [--codec DIR] [--partitions N] [--master local[2]]
                                   [--tables-out DIR]              the same five on Spark, blescope run on the executors

`blescope export --tables DIR FILE...` writes one JSON Lines file per table (captures, connections, findings,
streams, ota_sessions, iso_streams, quality_reports; schemas in schemas/tables/). On Spark, LIST is a text file
with one capture path per line (paths every executor can read); the paths are split into N partitions and each
partition runs ONE `blescope export --tables TMP FILE...` (blescope analyses its files in parallel), so a worker
starts blescope once per partition, not once per file; the rows come back tagged with their table and become one
DataFrame per table. Both engines read every table with the types of its JSON Schema (so an empty table or an
all-null column reads the same on both), run the same SQL (docs/fleets.md), and print one JSON object:
{question: [rows]}, rows in the query's order, numbers rounded as the SQL says.

Needs duckdb (pip install duckdb); Spark needs pyspark (pip install pyspark) and Java 17 (Debian:
openjdk-17-jre-headless). Exit: 0 answered, 2 bad usage or a missing engine.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "..", "schemas", "tables")
TABLES = ["captures", "connections", "findings", "streams", "ota_sessions", "iso_streams", "quality_reports"]

# The five fleet questions (docs/fleets.md shows each with its output). {median} is DuckDB's median(x) and Spark's
# percentile(x, 0.5): both the exact, interpolated median. Weeks start on Monday (1970-01-05 00:00 UTC = 345600 s).
QUESTIONS = {
    "supervision_timeouts_per_connection_hour": """
SELECT coalesce(c.controller_manufacturer, 'unknown') AS controller,
       count(*) AS connections,
       sum(CASE WHEN k.end_reason_code = 8 THEN 1 ELSE 0 END) AS supervision_timeouts,
       round(sum(coalesce(k.duration_s, c.last_time - k.start_time)) / 3600.0, 6) AS connection_hours,
       round(sum(CASE WHEN k.end_reason_code = 8 THEN 1 ELSE 0 END)
             / nullif(sum(coalesce(k.duration_s, c.last_time - k.start_time)) / 3600.0, 0), 3) AS per_connection_hour
FROM connections k JOIN captures c ON k.capture_id = c.capture_id
WHERE k.transport = 'le'
GROUP BY coalesce(c.controller_manufacturer, 'unknown')
ORDER BY controller""",
    "ota_by_protocol_and_image": """
SELECT protocol,
       coalesce(image_sha256, '') AS image_sha256,
       count(*) AS sessions,
       sum(CASE WHEN result = 'success' THEN 1 ELSE 0 END) AS successful,
       round(sum(CASE WHEN result = 'success' THEN 1 ELSE 0 END) / count(*), 4) AS success_rate,
       round({median}, 1) AS median_bps
FROM ota_sessions
GROUP BY protocol, coalesce(image_sha256, '')
ORDER BY protocol, image_sha256""",
    "top_rules_per_week": """
WITH weekly AS (
  SELECT CAST(floor((c.first_time - 345600) / 604800) AS BIGINT) * 604800 + 345600 AS week_start,
         f.rule AS rule, count(*) AS findings, count(DISTINCT f.capture_id) AS captures
  FROM findings f JOIN captures c ON f.capture_id = c.capture_id
  WHERE c.first_time IS NOT NULL
  GROUP BY CAST(floor((c.first_time - 345600) / 604800) AS BIGINT) * 604800 + 345600, f.rule),
ranked AS (
  SELECT week_start, rule, findings, captures,
         row_number() OVER (PARTITION BY week_start ORDER BY findings DESC, rule) AS place
  FROM weekly)
SELECT week_start, place, rule, findings, captures FROM ranked WHERE place <= 3 ORDER BY week_start, place""",
    "le_audio_loss_per_stream": """
SELECT capture_id, label, dir, sdus, expected_sdus, lost_sdus, round(loss_ratio, 6) AS loss_ratio, loss_bursts
FROM iso_streams
ORDER BY capture_id, label, dir""",
    "incomplete_captures": """
SELECT CASE WHEN error IS NOT NULL THEN 'unreadable' ELSE completeness_code END AS reason,
       count(*) AS captures,
       min(capture_id) AS example
FROM captures
WHERE error IS NOT NULL OR completeness IN ('incomplete', 'not decrypted', 'out of time order')
GROUP BY CASE WHEN error IS NOT NULL THEN 'unreadable' ELSE completeness_code END
ORDER BY captures DESC, reason""",
}
MEDIAN = {"duckdb": "median(throughput_bps)", "spark": "percentile(throughput_bps, 0.5)"}


def columns(table):
    """The table's columns and JSON types, in order, from its JSON Schema."""
    with open(os.path.join(SCHEMAS, table + ".schema.json")) as f:
        schema = json.load(f)
    out = []
    for name, prop in schema["properties"].items():
        t = prop.get("type", "string")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), "string")
        out.append((name, t))
    return out


def normalised(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return int(f) if f.is_integer() and abs(f) < 2**53 else round(f, 6)


def answer(rows_of):
    return {q: [{k: normalised(v) for k, v in r.items()} for r in rows_of(q)] for q in QUESTIONS}


def duckdb(args):
    try:
        import duckdb as db
    except ImportError:
        print("spark_fleet.py: duckdb is missing (pip install duckdb)", file=sys.stderr)
        return 2
    con = db.connect()
    types = {"integer": "BIGINT", "number": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN"}
    for table in TABLES:
        path = os.path.join(args.duckdb, table + ".jsonl")
        cols = ", ".join(f"'{n}': '{types[t]}'" for n, t in columns(table))
        if os.path.getsize(path) == 0:
            defs = ", ".join(f'"{n}" {types[t]}' for n, t in columns(table))
            con.execute(f"CREATE TABLE {table} ({defs})")
        else:
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_json('{path}', format = 'newline_delimited', "
                        f"columns = {{{cols}}})")

    def rows_of(q):
        cursor = con.execute(QUESTIONS[q].format(median=MEDIAN["duckdb"]))
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, r)) for r in cursor.fetchall()]

    print(json.dumps(answer(rows_of)))
    return 0


def spark(args):
    from pyspark.sql import SparkSession
    from pyspark.sql import types as T

    with open(args.files) as f:
        paths = [line.strip() for line in f if line.strip()]
    session = (SparkSession.builder.master(args.master).appName("blescope-fleet")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    blescope = args.blescope
    codecs = [a for c in args.codec for a in ("--codec", c)]

    def export(partition):
        files = list(partition)
        if not files:
            return
        out = tempfile.mkdtemp(prefix="blescope-tables-")
        try:
            # Unreadable files keep a captures row with their error and make blescope exit 2: that is fine here.
            subprocess.run([blescope, "export", "--quiet", "--tables", out] + codecs + files,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            for table in TABLES:
                with open(os.path.join(out, table + ".jsonl")) as f:
                    for line in f:
                        if line.strip():
                            yield table, line
        finally:
            shutil.rmtree(out, ignore_errors=True)

    tagged = session.sparkContext.parallelize(paths, args.partitions).mapPartitions(export).cache()
    spark_types = {"integer": T.LongType(), "number": T.DoubleType(), "string": T.StringType(),
                   "boolean": T.BooleanType()}
    for table in TABLES:
        schema = T.StructType([T.StructField(n, spark_types[t], True) for n, t in columns(table)])
        lines = tagged.filter(lambda p, t=table: p[0] == t).map(lambda p: p[1])
        frame = session.read.schema(schema).json(lines) if not lines.isEmpty() else session.createDataFrame([], schema)
        frame.createOrReplaceTempView(table)
        if args.tables_out:
            os.makedirs(args.tables_out, exist_ok=True)
            with open(os.path.join(args.tables_out, table + ".jsonl"), "w") as f:
                f.writelines(lines.collect())

    def rows_of(q):
        return [r.asDict() for r in session.sql(QUESTIONS[q].format(median=MEDIAN["spark"])).collect()]

    print(json.dumps(answer(rows_of)))
    session.stop()
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--blescope", help="the blescope binary (on every worker)")
    p.add_argument("--files", help="a text file listing the captures, one per line")
    p.add_argument("--codec", action="append", default=[], help="a codec spec or folder for blescope (repeatable)")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--master", default="local[2]", help="Spark master (local[N] for one machine)")
    p.add_argument("--tables-out", help="Spark: also write the tables it queried to this directory")
    p.add_argument("--duckdb", metavar="DIR", help="answer with DuckDB over the tables `blescope export --tables DIR` wrote")
    p.add_argument("--question", action="append", help="only this question (repeatable; default: all five)")
    args = p.parse_args()
    if args.question:
        unknown = [q for q in args.question if q not in QUESTIONS]
        if unknown:
            print(f"spark_fleet.py: unknown question {unknown[0]} (known: {', '.join(QUESTIONS)})", file=sys.stderr)
            return 2
        for q in list(QUESTIONS):
            if q not in args.question:
                del QUESTIONS[q]
    if args.duckdb:
        return duckdb(args)
    if args.blescope and args.files:
        return spark(args)
    p.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
