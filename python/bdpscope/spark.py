"""Capture archives on Apache Spark: ``bdpscope batch`` where the data are.

    python -m bdpscope.spark --out DIR PATH_OR_GLOB...
    spark-submit --master yarn -m bdpscope.spark ...   (see README: shipping the wheel)

or from a session::

    from bdpscope.spark import analyze_archive
    flows = analyze_archive(spark, ["hdfs:///captures/2024-06-*"])

The inputs are listed by Hadoop's file system API on the driver (names, sizes and
times: no content is read there), then a DataFrame of their paths goes to the executors
(``mapInArrow``), which read them, one task per capture: each task runs the library's analysis on
its file exactly as a ``bdpscope batch`` worker does (``bdpscope._native.batch_input``),
so the flows are the rows ``bdpscope batch`` writes for the same inputs, and the
captures rows say what became of each file. A file that is not a capture, cannot be
opened or is corrupt becomes a captures row with its status and reason (``skipped``,
``failed``, ``partial``), never a failed task or job.

The job writes, in DIR: ``flows/`` (Parquet, partitioned by the UTC day of each flow's
start, ``day=YYYY-MM-DD``), ``captures/`` (Parquet, one file) and ``summary.md`` /
``summary.html`` (the summary ``bdpscope batch`` writes, made by the same code).

Spark has no unsigned integers: an unsigned column of the flows table becomes the
narrowest signed type that holds it (u8 -> smallint, u16 -> int, u32/u64 -> bigint);
the values are the same (docs/tables.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa

from bdpscope import _native  # absolute: spark-submit runs this file as a script

__all__ = ["analyze_archive", "archive", "Archive", "main"]


def _tables():
    """The empty flows, packets and captures tables, as pyarrow tables."""
    flows, _packets, captures = _native.schemas()
    return pa.table(flows), pa.table(captures)


def _is_string_view(t: pa.DataType) -> bool:
    return hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)


def _spark_arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Spark hands over for a column of our Arrow type ``t``."""
    if pa.types.is_uint8(t):
        return pa.int16()
    if pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t) or pa.types.is_uint64(t):
        return pa.int64()
    if pa.types.is_large_string(t) or pa.types.is_string(t) or _is_string_view(t):
        return pa.string()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(pa.field("element", _spark_arrow_type(t.value_type), True))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_arrow_type(f.type), True) for f in t])
    return t


def _spark_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _spark_arrow_type(f.type), True) for f in schema])


def _spark_type(t: pa.DataType):
    """The Spark SQL type of a column of Arrow type ``t`` (as cast by _spark_arrow_type)."""
    from pyspark.sql import types as T

    t = _spark_arrow_type(t)
    if pa.types.is_int16(t):
        return T.ShortType()
    if pa.types.is_int32(t):
        return T.IntegerType()
    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_boolean(t):
        return T.BooleanType()
    if pa.types.is_string(t):
        return T.StringType()
    if pa.types.is_timestamp(t):
        return T.TimestampType()
    if pa.types.is_list(t):
        return T.ArrayType(_spark_type(t.value_type), True)
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, _spark_type(f.type), True) for f in t])
    raise TypeError(f"no Spark type for {t}")


def _struct_type(schema: pa.Schema):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _spark_type(f.type), True) for f in schema])


# What one task hands back: a flow or a capture row, in one record batch schema.
def _output_schema() -> Tuple[pa.Schema, pa.Schema, pa.Schema]:
    flows, captures = _tables()
    f, c = _spark_schema(flows.schema), _spark_schema(captures.schema)
    out = pa.schema(
        [
            pa.field("flow", pa.struct(list(f)), True),
            pa.field("capture", pa.struct(list(c)), True),
            # The input's done.jsonl record (captures row, middlebox findings): the summary's.
            pa.field("record", pa.string(), True),
        ]
    )
    return f, c, out


def _local_path(uri: str) -> Optional[str]:
    """The local path of a ``file:`` URI (as Spark lists local files), else None."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    if "://" not in uri and not uri.startswith("hdfs:") and not uri.startswith("s3"):
        return uri
    return None


def _name(uri: str) -> str:
    """The name a capture goes by in the tables: its local path, as ``bdpscope batch``
    names it given absolute paths; a remote file keeps its URI."""
    local = _local_path(uri)
    return local if local is not None else uri


def _open_remote(uri: str):
    """A remote file as a binary stream (fsspec, which knows s3://, hdfs://, gs://...)."""
    import fsspec

    return fsspec.open(uri, "rb").open()


def _failed_row(name: str, size: int, mtime_ns: int, why: str) -> dict:
    return {
        "path": name,
        "status": "failed",
        "size_bytes": size,
        "mtime": (mtime_ns / 1e9) if mtime_ns else None,
        "error": why,
    }


def _record(row: dict, size: int, mtime_ns: int, columns: Sequence[str]) -> str:
    """The done.jsonl record of an input the task could not hand to the analysis."""
    import json

    full = {c: None for c in columns}
    full.update(row)
    # Floats as done.jsonl keeps them: their shortest text.
    exact = {k: (repr(v) if isinstance(v, float) else v) for k, v in full.items()}
    return json.dumps(
        {
            "unit": row["path"],
            "options": "spark",
            "schema": "",
            "inputs": [{"path": row["path"], "size": size, "mtime_ns": mtime_ns}],
            "part": None,
            "flows": 0,
            "captures": [exact],
            "middlebox": [],
            "floods": [],
        }
    )


def _analyse_inputs(batches: Iterator[pa.RecordBatch], link_rate: Optional[float]) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function: each input row (uri, size, mtime_ns) to its flows and its
    captures row. Runs on an executor."""
    flow_schema, capture_schema, out_schema = _output_schema()
    for batch in batches:
        for row in batch.to_pylist():
            uri, size, mtime_ns = row["uri"], int(row["size"] or 0), int(row["mtime_ns"] or 0)
            named = bool(row["named"])
            name = _name(uri)
            local = _local_path(uri)
            try:
                if local is not None:
                    # The file's own stamp (nanoseconds, as batch takes it), not the
                    # listing's (milliseconds).
                    try:
                        st = os.stat(local)
                        size, mtime_ns = st.st_size, st.st_mtime_ns
                    except OSError:
                        pass
                    flows, captures, record = _native.batch_input(local, name, size, mtime_ns, link_rate, named)
                else:
                    with _open_remote(uri) as stream:
                        flows, captures, record = _native.batch_input(stream, name, size, mtime_ns, link_rate, named)
                flows = pa.table(flows).cast(flow_schema)
                captures = pa.table(captures).cast(capture_schema)
            except Exception as e:  # a task never fails for one input: its row says why
                row = _failed_row(name, size, mtime_ns, f"{type(e).__name__}: {e}")
                flows = flow_schema.empty_table()
                captures = pa.Table.from_pylist([row], schema=capture_schema)
                record = _record(row, size, mtime_ns, capture_schema.names)
            n, m = flows.num_rows, captures.num_rows
            flow_col = pa.StructArray.from_arrays(
                [flows.column(i).combine_chunks() for i in range(flows.num_columns)], fields=list(flow_schema)
            )
            cap_col = pa.StructArray.from_arrays(
                [captures.column(i).combine_chunks() for i in range(captures.num_columns)], fields=list(capture_schema)
            )
            if n:
                yield pa.RecordBatch.from_arrays(
                    [flow_col, pa.nulls(n, out_schema.field("capture").type), pa.nulls(n, pa.string())],
                    schema=out_schema,
                )
            yield pa.RecordBatch.from_arrays(
                [pa.nulls(m, out_schema.field("flow").type), cap_col, pa.array([record] * m, pa.string())],
                schema=out_schema,
            )


class Archive:
    """The tables of an archive: ``flows`` and ``captures`` (Spark DataFrames, computed
    once: the analysis result is persisted until :meth:`unpersist`)."""

    def __init__(self, flows, captures, records, both):
        self.flows = flows
        self.captures = captures
        self.records = records
        self._both = both

    def unpersist(self) -> None:
        self._both.unpersist()


def _inputs(spark, paths: Sequence[str]) -> List[dict]:
    """Every file under the paths (folders recursively, globs expanded), listed by
    Hadoop's file system API on the driver without reading a byte: (uri, size,
    mtime_ns, named). Not the ``binaryFile`` source's listing: its scan leaves out files
    of no bytes, and an empty file is an input batch reports. ``named``: given as a path
    (or a glob's match) rather than found in a folder; as for batch's PATHs, such a file
    that is no capture is failed, not skipped."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out = []
    for p in paths:
        path = jvm.org.apache.hadoop.fs.Path(p)
        fs = path.getFileSystem(conf)
        matches = fs.globStatus(path) or []
        for st in matches:
            if st.isDirectory():
                it = fs.listFiles(st.getPath(), True)
                while it.hasNext():
                    f = it.next()
                    out.append(_listed(f, False))
            else:
                out.append(_listed(st, True))
    return out


def _listed(status, named: bool) -> dict:
    return {
        "uri": status.getPath().toString(),
        "size": int(status.getLen()),
        "mtime_ns": int(status.getModificationTime()) * 1_000_000,
        "named": named,
    }


def archive(spark, paths: Sequence[str], *, link_rate: Optional[float] = None, max_tasks: int = 100_000) -> Archive:
    """Analyses every capture under ``paths`` on the executors: one task per capture
    (up to ``max_tasks`` tasks; beyond, several captures share a task), largest first."""
    from pyspark.sql import functions as F

    rows = _inputs(spark, paths)
    # Largest first, so the long captures start early and the small fill the gaps (as
    # batch orders its work); the same name once (a path given twice is read once), named
    # if it was named any of the times.
    named = {r["uri"] for r in rows if r["named"]}
    seen, inputs = set(), []
    for r in sorted(rows, key=lambda r: (-(r["size"] or 0), r["uri"])):
        if r["uri"] not in seen:
            seen.add(r["uri"])
            inputs.append((r["uri"], int(r["size"] or 0), int(r["mtime_ns"] or 0), r["uri"] in named))
    tasks = max(1, min(len(inputs), max_tasks))
    sc = spark.sparkContext
    from pyspark.sql import types as T

    input_schema = T.StructType(
        [
            T.StructField("uri", T.StringType(), False),
            T.StructField("size", T.LongType(), False),
            T.StructField("mtime_ns", T.LongType(), False),
            T.StructField("named", T.BooleanType(), False),
        ]
    )
    listed = spark.createDataFrame(sc.parallelize(inputs, tasks), input_schema)
    flow_schema, capture_schema, out_schema = _output_schema()
    out_type = T.StructType(
        [
            T.StructField("flow", _struct_type(flow_schema), True),
            T.StructField("capture", _struct_type(capture_schema), True),
            T.StructField("record", T.StringType(), True),
        ]
    )
    both = listed.mapInArrow(lambda it: _analyse_inputs(it, link_rate), out_type).persist()
    flows = both.where(F.col("flow").isNotNull()).select("flow.*")
    captures = both.where(F.col("capture").isNotNull()).select("capture.*")
    records = both.where(F.col("record").isNotNull()).select("record")
    return Archive(flows, captures, records, both)


def analyze_archive(spark, paths: Sequence[str], *, link_rate: Optional[float] = None):
    """The flows table of every capture under ``paths`` (a Spark DataFrame): the rows
    ``bdpscope batch`` writes for the same inputs. See :func:`archive` for the captures
    table too."""
    return archive(spark, paths, link_rate=link_rate).flows


def write(a: Archive, out: str) -> Tuple[int, int]:
    """Writes ``flows/`` (partitioned by day), ``captures/`` and the summary into ``out``.
    Returns (flows, inputs)."""
    from pyspark.sql import functions as F

    flows = a.flows.withColumn("day", F.to_date(F.col("start_ts")))
    flows.orderBy("capture", "id").write.mode("overwrite").partitionBy("day").parquet(os.path.join(out, "flows"))
    a.captures.orderBy("path").coalesce(1).write.mode("overwrite").parquet(os.path.join(out, "captures"))
    n_flows = a.flows.count()
    n_inputs = a.captures.count()
    write_summary(a, out)
    return n_flows, n_inputs


# The flows' columns the summary's statistics read.
_SUMMARY_COLUMNS = [
    "capture", "id", "client_addr", "client_port", "server_addr", "server_port", "verdict",
    "goodput_bps", "rtt_min_ms", "max_rwnd_bytes", "stalls", "stall_durations_s",
]


def write_summary(a: Archive, out: str, batch_rows: int = 1 << 18) -> None:
    """summary.md and summary.html, by batch's own code: the inputs' records and the
    flows' statistics columns come to the driver (a few numbers per flow), in batches."""
    records = [r["record"] for r in a.records.collect()]
    summary = _native.Summary(records)
    cols = a.flows.select(*_SUMMARY_COLUMNS)
    rows = []
    for r in cols.toLocalIterator():
        rows.append(r)
        if len(rows) >= batch_rows:
            _add(summary, rows)
            rows = []
    if rows:
        _add(summary, rows)
    local = _local_path(out)
    if local is None:
        import tempfile

        import fsspec

        with tempfile.TemporaryDirectory() as tmp:
            summary.write(tmp)
            for name in ("summary.md", "summary.html"):
                with open(os.path.join(tmp, name), "rb") as src, fsspec.open(f"{out.rstrip('/')}/{name}", "wb") as dst:
                    dst.write(src.read())
    else:
        os.makedirs(local, exist_ok=True)
        summary.write(local)


def _add(summary, rows) -> None:
    columns = list(zip(*rows))
    summary.add(*[list(c) for c in columns])


def _session(master: Optional[str]):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName("bdpscope")
    if master:
        b = b.master(master)
    # Timestamps are UTC instants: a session in another zone would still show them right,
    # but the day partitions are UTC days.
    b = b.config("spark.sql.session.timeZone", "UTC")
    return b.getOrCreate()


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bdpscope.spark",
        description="Analyse a capture archive on Spark: flows (Parquet by day), captures and summary in --out.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH_OR_GLOB", help="files, folders (recursive) or globs; any Hadoop file system URI")
    p.add_argument("--out", required=True, help="output folder (any Hadoop file system URI)")
    p.add_argument("--master", default=None, help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--link-rate", type=float, default=None, help="the bottleneck rate in bits/s, if known")
    args = p.parse_args(argv)
    spark = _session(args.master)
    t0 = time.monotonic()
    a = archive(spark, args.paths, link_rate=args.link_rate)
    n_flows, n_inputs = write(a, args.out)
    failed = a.captures.where("status = 'failed'").select("path", "error").orderBy("path").collect()
    for r in failed[:20]:
        print(f"bdpscope: {r['path']}: {r['error']}", file=sys.stderr)
    print(
        f"bdpscope: spark: {n_inputs} inputs, {n_flows} flows -> {args.out} in {time.monotonic() - t0:.1f} s",
        file=sys.stderr,
    )
    a.unpersist()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
