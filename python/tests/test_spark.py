"""The Spark job in local mode (local[2]) against `bdpscope batch` on the same inputs:
fixtures/, ../shared/captures, and an input of each kind of trouble (not a capture,
corrupt, cut short). The flows are the same rows, column for column; the captures rows
too; a bad input is a row, never a failed job."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import FIXTURES, raw_pcap, run

pyspark = pytest.importorskip("pyspark") if not os.environ.get("BDPSCOPE_CI") else __import__("pyspark")


def trouble(folder: Path) -> Path:
    """Inputs batch and the job must both survive: text, a corrupt and a cut capture."""
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("not a capture\n")
    raw = raw_pcap(FIXTURES / "rcvbuf_16k" / "client.pcap.gz")
    (folder / "cut.pcap").write_bytes(raw[: len(raw) // 2 + 3])
    bad = bytearray(raw[:4096])
    bad[24 + 8 : 24 + 12] = (0x7FFFFFF0).to_bytes(4, "little")  # a record of 2 GB
    (folder / "corrupt.pcap").write_bytes(bytes(bad))
    (folder / "empty.pcap").write_bytes(b"")
    return folder


def read_dir(path: Path) -> pl.DataFrame:
    files = sorted(path.rglob("*.parquet"))
    assert files, f"no Parquet under {path}"
    frames = []
    for f in files:
        df = pl.read_parquet(f, hive_partitioning=False)
        frames.append(df)
    return pl.concat(frames, how="vertical_relaxed")


def comparable(df: pl.DataFrame) -> pl.DataFrame:
    """Spark's signed integer types to Int64, timestamps to UTC microseconds, lists of
    structs as they are: the values, not the widths Spark can hold them in."""
    out = []
    for name, dtype in df.schema.items():
        c = pl.col(name)
        if dtype.is_integer():
            c = c.cast(pl.Int64)
        elif isinstance(dtype, pl.Datetime):
            c = c.dt.replace_time_zone(None).dt.cast_time_unit("us") if dtype.time_zone else c.dt.cast_time_unit("us")
        elif isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
            c = c.list.eval(pl.element().struct.json_encode())
        out.append(c)
    return df.select(out)


def test_spark_local_equals_batch(cli, shared, tmp_path):
    inputs = [str(FIXTURES), str(shared / "captures"), str(trouble(tmp_path / "trouble"))]
    t0 = time.monotonic()
    run(cli, "batch", *inputs, "--out", tmp_path / "batch", check=False)
    batch_s = time.monotonic() - t0
    t0 = time.monotonic()
    job = subprocess.run(
        [sys.executable, "-m", "bdpscope.spark", "--master", "local[2]", "--out", str(tmp_path / "spark"), *inputs],
        capture_output=True,
        text=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    spark_s = time.monotonic() - t0
    print(f"\nbatch: {batch_s:.1f} s; spark local[2]: {spark_s:.1f} s (the JVM's start included)")
    assert job.returncode in (0, 1), job.stderr[-4000:]
    assert "Traceback" not in job.stderr, job.stderr[-4000:]

    batch = pl.read_parquet(tmp_path / "batch" / "flows.parquet")
    spark = read_dir(tmp_path / "spark" / "flows")
    assert spark.height == batch.height > 0
    days = sorted(p.name for p in (tmp_path / "spark" / "flows").iterdir() if p.name.startswith("day="))
    assert days, "flows partitioned by day"
    key = ["capture", "id"]
    b = comparable(batch).sort(key)
    s = comparable(spark.select(batch.columns)).sort(key)
    for col in batch.columns:
        assert s[col].to_list() == b[col].to_list(), col

    caps_batch = comparable(pl.read_parquet(tmp_path / "batch" / "captures.parquet")).sort("path")
    caps_spark = comparable(read_dir(tmp_path / "spark" / "captures").select(caps_batch.columns)).sort("path")
    assert caps_spark.equals(caps_batch)
    status = dict(zip(caps_spark["path"], caps_spark["status"]))
    t = tmp_path / "trouble"
    assert status[str(t / "notes.txt")] == "skipped"
    assert status[str(t / "cut.pcap")] == "partial"
    assert status[str(t / "corrupt.pcap")] in ("partial", "failed")
    assert (job.returncode == 1) == any(v == "failed" for v in status.values())

    summary = (tmp_path / "spark" / "summary.md").read_text()
    assert summary == (tmp_path / "batch" / "summary.md").read_text()
