"""The Python package against the command line: the same flows, the same document, the
same per-segment table, from every kind of source."""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bdpscope
from conftest import FIXTURES, fixture_captures, pcap_to_pcapng, raw_pcap, repeat_pcap, run

RCVBUF = FIXTURES / "rcvbuf_16k" / "client.pcap.gz"
MULTI = FIXTURES / "app_onoff" / "client.pcap.gz"


def cli_json(cli, path) -> dict:
    return json.loads(run(cli, "analyze", path, "--format", "json").stdout)


def key_rows(df: pl.DataFrame) -> list:
    return df.select(
        "id", "client_addr", "client_port", "server_addr", "server_port", "verdict", "bdp_bytes", "rtt_min_ms",
        "receiver_window_share", "cwnd_share", "bottleneck_share", "sender_share",
    ).rows()


def json_key_rows(doc: dict) -> list:
    out = []
    for f in doc["flows"]:
        c_addr, c_port = f["client"].rsplit(":", 1)
        s_addr, s_port = f["server"].rsplit(":", 1)
        lim = f["limits"] or {}
        out.append(
            (
                f["id"], c_addr.strip("[]"), int(c_port), s_addr.strip("[]"), int(s_port), f["verdict"], f["bdp_bytes"],
                f["rtt_ms"]["min"], lim.get("receiver-window-limited"), lim.get("cwnd-limited"),
                lim.get("bottleneck-limited"), lim.get("sender-limited"),
            )
        )
    return out


@pytest.mark.parametrize("capture", fixture_captures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_analyze_and_report_are_the_command_lines(cli, capture):
    doc = cli_json(cli, capture)
    assert bdpscope.report(str(capture)) == doc, "report() is the analyze --format json document"
    flows = bdpscope.analyze(capture)
    assert key_rows(flows) == json_key_rows(doc)
    assert flows["capture"].to_list() == [str(capture)] * flows.height


def test_every_source_gives_the_same_flows(tmp_path):
    raw = raw_pcap(RCVBUF)
    (tmp_path / "c.pcap").write_bytes(raw)
    want = bdpscope.analyze(tmp_path / "c.pcap").drop("capture")
    import fsspec

    sources = {
        "path str": str(tmp_path / "c.pcap"),
        "bytes": raw,
        "bytearray": bytearray(raw),
        "memoryview": memoryview(raw),
        "BytesIO": io.BytesIO(raw),
        "open file": open(tmp_path / "c.pcap", "rb"),
        "fsspec": fsspec.open(f"file://{tmp_path / 'c.pcap'}", "rb").open(),
        "gzip path": RCVBUF,
    }
    for what, src in sources.items():
        got = bdpscope.analyze(src)
        assert got.drop("capture").equals(want), what
    assert bdpscope.analyze(io.BytesIO(raw))["capture"][0] == "<stream>"
    assert bdpscope.analyze(raw)["capture"][0] == "<bytes>"
    assert bdpscope.analyze(open(tmp_path / "c.pcap", "rb"))["capture"][0] == str(tmp_path / "c.pcap")


def test_compressed_and_pcapng_are_read_as_on_the_command_line(cli, tmp_path):
    import zstandard

    raw = raw_pcap(MULTI)
    forms = {
        "c.pcap": raw,
        "c.pcap.zst": zstandard.ZstdCompressor().compress(raw),
        "c.pcapng": pcap_to_pcapng(raw),
    }
    want = bdpscope.analyze(raw).drop("capture")
    assert want.height > 0
    for name, data in forms.items():
        p = tmp_path / name
        p.write_bytes(data)
        got = bdpscope.analyze(p)
        assert got.drop("capture").equals(want), name
        assert key_rows(got) == json_key_rows(cli_json(cli, p)), name
    doc = bdpscope.report(tmp_path / "c.pcapng")
    assert doc["captures"][0]["format"] == "pcapng"
    assert bdpscope.report(tmp_path / "c.pcap.zst")["captures"][0]["compression"] == "zstd"


def test_bad_input_raises_the_command_lines_error(cli, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_bytes(b"<!DOCTYPE html> not a capture\n")
    with pytest.raises(bdpscope.CaptureError) as e:
        bdpscope.analyze(p)
    assert isinstance(e.value, ValueError)
    r = run(cli, "analyze", p, check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == f"bdpscope: {e.value}"
    for call in (bdpscope.report, bdpscope.packets):
        with pytest.raises(bdpscope.CaptureError):
            call(p)
    with pytest.raises(bdpscope.CaptureError, match="<bytes>: not readable as a capture"):
        bdpscope.analyze(b"")
    with pytest.raises(FileNotFoundError, match="cannot open"):
        bdpscope.analyze(tmp_path / "missing.pcap")
    with pytest.raises(TypeError):
        bdpscope.analyze(12345)
    with pytest.raises(TypeError):
        bdpscope.analyze(RCVBUF, link_rate="fast")


def test_a_cut_capture_returns_what_was_read_with_a_warning(cli, tmp_path):
    raw = raw_pcap(RCVBUF)
    cut = raw[: len(raw) * 2 // 3 + 7]
    p = tmp_path / "cut.pcap"
    p.write_bytes(cut)
    with pytest.warns(bdpscope.CaptureWarning) as w:
        flows = bdpscope.analyze(p)
    message = str(w[0].message)
    assert "cut short" in message and message.startswith(f"{p}: ")
    r = run(cli, "analyze", p, "--format", "json")
    assert f"bdpscope: warning: {message}" in r.stderr
    assert key_rows(flows) == json_key_rows(json.loads(r.stdout))
    assert flows.height == 1 and flows["packets"][0] > 0
    with pytest.warns(bdpscope.CaptureWarning):
        doc = bdpscope.report(p)
    assert doc == json.loads(r.stdout)
    with pytest.warns(bdpscope.CaptureWarning):
        segs = bdpscope.packets(p)
    assert segs.height > 0


def read_cli_packets(cli, path, *flags) -> list:
    out = run(cli, "packets", path, *flags).stdout
    return list(csv.DictReader(io.StringIO(out)))


@pytest.mark.parametrize("capture", [RCVBUF, MULTI, FIXTURES / "ipv6_rwnd" / "client.pcap.gz"], ids=lambda p: p.parent.name)
def test_packets_is_the_command_lines_csv(cli, capture):
    rows = read_cli_packets(cli, capture)
    df = bdpscope.packets(capture)
    assert df.columns == list(rows[0].keys())
    assert df.height == len(rows)
    # Times as integer nanoseconds, the CSV's `secs.nanos` read exactly.
    ns = df["time"].dt.epoch("ns").to_list()

    def csv_ns(t: str) -> int:
        s, f = t.split(".")
        return int(s) * 1_000_000_000 + (int(f) if int(s) >= 0 else -int(f))

    assert ns == [csv_ns(r["time"]) for r in rows]
    bools = {"retransmission", "dup_ack", "zero_window", "window_full"}
    floats = {"rtt_ms", "ts_rtt_ms"}
    for col in df.columns:
        if col == "time":
            continue
        got = df[col].to_list()
        want = [r[col] for r in rows]
        for i, (g, w) in enumerate(zip(got, want)):
            if w == "":
                assert g is None, (col, i, g)
            elif col in bools:
                assert g == (w == "1"), (col, i)
            elif col in floats:
                assert f"{g:.3f}" == w, (col, i, g, w)
            elif col in ("dir", "flags", "ecn"):
                assert g == w, (col, i)
            else:
                assert g == int(w), (col, i, g, w)


def test_packets_of_chosen_flows(cli, tmp_path):
    # Every fixture holds one flow: three copies of one make three flows.
    path = tmp_path / "three.pcap"
    path.write_bytes(repeat_pcap(raw_pcap(RCVBUF), 3))
    all_ = bdpscope.packets(path)
    flows = sorted(set(all_["flow"].to_list()))
    assert len(flows) == 3
    one = bdpscope.packets(path, flow=flows[1])
    assert set(one["flow"].to_list()) == {flows[1]}
    assert one.height == len(read_cli_packets(cli, path, "--flow", flows[1]))
    assert bdpscope.packets(path, flow=flows).height == all_.height
    assert bdpscope.packets(path, flow=[10_000]).height == 0


def test_the_flows_table_is_batchs_parquet(cli, tmp_path):
    out = tmp_path / "out"
    inputs = [str(p) for p in fixture_captures()[:4]]
    run(cli, "batch", *inputs, "--out", out)
    batch = pl.read_parquet(out / "flows.parquet")
    ours = pl.concat([bdpscope.analyze(p, jobs=1) for p in sorted(inputs)])
    assert ours.schema == batch.schema
    assert ours.sort("capture", "id").equals(batch.sort("capture", "id"))
    # For other readers: plain strings, UTC timestamps, small integers, lists and structs.
    schema = pq.read_schema(out / "flows.parquet")
    # Strings are Parquet's plain UTF8 byte arrays (what every reader knows). polars also
    # stores its Arrow schema, where they are `string_view`: pyarrow >= 16 takes that.
    parquet = pq.ParquetFile(out / "flows.parquet").schema
    text = parquet.column(parquet.names.index("capture"))
    assert text.physical_type == "BYTE_ARRAY" and str(text.logical_type) == "String"
    assert schema.field("start_ts").type == pa.timestamp("us", tz="UTC")
    assert schema.field("client_port").type == pa.uint16()
    assert schema.field("client_wscale").type == pa.uint8()
    assert pa.types.is_list(schema.field("evidence").type) or pa.types.is_large_list(schema.field("evidence").type)
    item = schema.field("advice_items").type.value_type
    assert [f.name for f in item] == [
        "kind", "knob", "current_bytes", "recommended_bytes", "expected_bps", "expected_gain", "lower_bound",
    ]
    # The same frame through pyarrow's side of the Arrow stream.
    flows, _, _ = bdpscope._native.schemas()
    assert {f.name for f in pa.table(flows).schema} == set(batch.columns)


def test_the_csv_shape_keeps_lists_as_text(cli):
    r = run(cli, "analyze", RCVBUF, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    df = bdpscope.analyze(RCVBUF)
    assert list(rows[0].keys()) == df.columns
    assert rows[0]["evidence"] == " | ".join(df["evidence"][0])
    assert rows[0]["start_ts"].endswith("Z") and rows[0]["start_ts"].startswith("20")
    items = json.loads(rows[0]["advice_items"])
    assert [i["kind"] for i in items] == [a["kind"] for a in df["advice_items"][0]]
    assert rows[0]["client_port"] == str(df["client_port"][0])


GIL_PROBE = r"""
import os, sys, threading, bdpscope
fifo, data = sys.argv[1], open(sys.argv[2], "rb").read()
def feed():
    with open(fifo, "wb") as w:
        w.write(data)
threading.Thread(target=feed, daemon=True).start()
# analyze() waits for the capture's bytes from the pipe, which only the thread above (Python
# code: it needs the GIL) writes: were the GIL held while the capture is read, neither
# could go on.
print(bdpscope.analyze(fifo, jobs=1).height)
"""


def test_the_gil_is_released_while_a_capture_is_analysed(tmp_path):
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = tmp_path / "c.pcap"
    data.write_bytes(raw_pcap(RCVBUF))
    # A deadlock, not a slow run, is what the timeout catches (the probe takes < 1 s).
    r = subprocess.run(
        [sys.executable, "-c", GIL_PROBE, str(fifo), str(data)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


def test_threads_analyse_captures_in_parallel():
    from concurrent.futures import ThreadPoolExecutor

    paths = fixture_captures()
    serial = [bdpscope.analyze(p, jobs=1) for p in paths]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda p: bdpscope.analyze(p, jobs=1), paths))
    for a, b in zip(serial, parallel):
        assert a.equals(b)


def test_version_and_schema_version():
    assert bdpscope.FLOWS_SCHEMA_VERSION == 6
    assert bdpscope.__version__
