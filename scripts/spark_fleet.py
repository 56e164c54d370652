#!/usr/bin/env python3
"""Fleet analysis on Apache Spark: blescope runs where the captures are, Spark SQL answers the question.

    python3 scripts/spark_fleet.py --blescope PATH --files LIST [--codec DIR] [--partitions N] [--jsonl OUT] [--master local[2]]
    python3 scripts/spark_fleet.py --duckdb JSONL          (the same query with DuckDB, to cross-check)

LIST is a text file with one capture path per line (paths every executor can read: a shared file system, or
copies; with object storage, fetch each file in the partition first). The paths are split into N partitions;
each partition runs ONE `blescope report --format jsonl --quiet FILE...` (blescope itself analyses its files in
parallel, --jobs defaults to the cores), so a worker starts blescope once per partition, not once per file. The
JSON Lines (one line per capture) become a DataFrame, and Spark SQL computes, per OTA protocol: sessions,
successful sessions, success rate and the median throughput (exact, interpolated: Spark's `percentile`,
DuckDB's `median`). The result is printed as JSON, one object per protocol, sorted by protocol.

Needs pyspark (pip install pyspark; it brings Spark) and Java 17 (Debian: apt-get install openjdk-17-jre-headless).
--duckdb needs duckdb (pip install duckdb).
"""
import argparse
import json
import subprocess
import sys

QUERY = """
SELECT s.protocol AS protocol,
       count(*) AS sessions,
       sum(CASE WHEN s.result = 'success' THEN 1 ELSE 0 END) AS successful,
       round(sum(CASE WHEN s.result = 'success' THEN 1 ELSE 0 END) / count(*), 4) AS success_rate,
       round({median}(s.throughput_bps{median_tail}), 1) AS median_bps
FROM (SELECT {explode}(ota.sessions) AS s FROM captures WHERE error IS NULL AND ota IS NOT NULL) AS t
GROUP BY s.protocol
ORDER BY s.protocol
"""


def rows_as_json(rows):
    out = []
    for r in rows:
        d = dict(r)
        out.append({"protocol": d["protocol"], "sessions": int(d["sessions"]), "successful": int(d["successful"]),
                    "success_rate": float(d["success_rate"]),
                    "median_bps": None if d["median_bps"] is None else float(d["median_bps"])})
    return out


def spark(args):
    from pyspark.sql import SparkSession

    with open(args.files) as f:
        paths = [line.strip() for line in f if line.strip()]
    session = (SparkSession.builder.master(args.master).appName("blescope-fleet")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    blescope = args.blescope
    codecs = [a for c in args.codec for a in ("--codec", c)]

    def analyse(partition):
        files = list(partition)
        if not files:
            return
        # One blescope per partition; unreadable files give {"file", "error"} lines and exit 2, which is fine.
        run = subprocess.run([blescope, "report", "--format", "jsonl", "--quiet"] + codecs + files,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        for line in run.stdout.decode("utf-8").splitlines():
            if line.strip():
                yield line

    lines = session.sparkContext.parallelize(paths, args.partitions).mapPartitions(analyse)
    if args.jsonl:
        collected = lines.collect()
        with open(args.jsonl, "w") as f:
            f.write("\n".join(collected) + "\n")
        lines = session.sparkContext.parallelize(collected, args.partitions)
    frame = session.read.json(lines)
    frame.createOrReplaceTempView("captures")
    result = session.sql(QUERY.format(explode="explode", median="percentile", median_tail=", 0.5")).collect()
    print(json.dumps(rows_as_json([r.asDict() for r in result])))
    session.stop()


def duckdb(args):
    import duckdb as db

    con = db.connect()
    con.execute(f"CREATE VIEW captures AS SELECT * FROM read_json('{args.duckdb}', format = 'newline_delimited', "
                "maximum_object_size = 268435456)")
    cursor = con.execute(QUERY.format(explode="unnest", median="median", median_tail=""))
    names = [c[0] for c in cursor.description]
    print(json.dumps(rows_as_json([dict(zip(names, r)) for r in cursor.fetchall()])))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--blescope", help="the blescope binary (on every worker)")
    p.add_argument("--files", help="a text file listing the captures, one per line")
    p.add_argument("--codec", action="append", default=[], help="a codec spec or folder for blescope (repeatable)")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--master", default="local[2]", help="Spark master (local[N] for one machine)")
    p.add_argument("--jsonl", help="also write the JSON Lines Spark queried to this file")
    p.add_argument("--duckdb", metavar="JSONL", help="run the query with DuckDB over these JSON Lines instead")
    args = p.parse_args()
    if args.duckdb:
        duckdb(args)
    elif args.blescope and args.files:
        spark(args)
    else:
        p.print_usage(sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
