"""What the tests need from outside the package: the command line (the reference the
package is compared with), the fixtures, and ../shared. Missing, a test skips with the
reason — or fails under CI (BDPSCOPE_CI=1, set by .ci/run), as tests/needs does for the
Rust tests."""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def _need(what: str, why: str):
    if os.environ.get("BDPSCOPE_CI"):
        pytest.fail(f"{what} is missing ({why}); BDPSCOPE_CI is set, so this fails instead of skipping")
    pytest.skip(f"{what} is missing: {why}")


@pytest.fixture(scope="session")
def cli() -> Path:
    """The bdpscope binary of this tree (BDPSCOPE_BIN, else target/release/bdpscope)."""
    p = Path(os.environ.get("BDPSCOPE_BIN", REPO / "target" / "release" / "bdpscope"))
    if not p.exists():
        _need(str(p), "build it with `cargo build --release`")
    return p


@pytest.fixture(scope="session")
def shared() -> Path:
    """../shared (or BDPSCOPE_SHARED): the lab corpora."""
    p = Path(os.environ.get("BDPSCOPE_SHARED", REPO.parent / "shared"))
    if not (p / "captures").is_dir():
        _need(str(p / "captures"), "the shared corpora; set BDPSCOPE_SHARED")
    return p


def run(cli: Path, *args, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"bdpscope {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r


def fixture_captures() -> list:
    return sorted(FIXTURES.glob("*/*.pcap.gz"))


def raw_pcap(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())


def pcap_to_pcapng(data: bytes) -> bytes:
    """The same records as pcapng (section header, one interface, enhanced packet
    blocks), little-endian, nanosecond or microsecond resolution kept."""
    magic = data[:4]
    le = magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
    nanos = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    e = "<" if le else ">"
    _, _, _, _, snaplen, linktype = struct.unpack(e + "HHiIII", data[4:24])
    out = bytearray()

    def block(kind: int, body: bytes):
        pad = (-len(body)) % 4
        n = 12 + len(body) + pad
        out.extend(struct.pack("<II", kind, n) + body + b"\0" * pad + struct.pack("<I", n))

    block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    options = b""
    if nanos:
        options = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)
    block(1, struct.pack("<HHI", linktype & 0xFFFF, 0, snaplen) + options)
    off = 24
    unit = 1_000_000_000 if nanos else 1_000_000
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(e + "IIII", data[off : off + 16])
        pkt = data[off + 16 : off + 16 + incl]
        ts = sec * unit + frac
        block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, incl, orig) + pkt)
        off += 16 + incl
    return bytes(out)


def repeat_pcap(data: bytes, copies: int) -> bytes:
    """A longer capture: the records of `data` `copies` times, each copy shifted in time
    past the one before and on ports of its own (its own connections): a bigger input
    made from a real one. Ethernet + IPv4 captures only."""
    magic = data[:4]
    e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    records, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(e + "IIII", data[off : off + 16])
        records.append((sec, frac, incl, orig, data[off + 16 : off + 16 + incl]))
        off += 16 + incl
    span = records[-1][0] - records[0][0] + 400  # past every timeout: new connections
    out = bytearray(data[:24])
    for k in range(copies):
        for sec, frac, incl, orig, pkt in records:
            pkt = bytearray(pkt)
            if len(pkt) >= 34 and pkt[12:14] == b"\x08\x00":
                tcp = 14 + (pkt[14] & 0x0F) * 4
                for at in (tcp, tcp + 2):
                    port = int.from_bytes(pkt[at : at + 2], "big")
                    pkt[at : at + 2] = ((port + k) % 65536).to_bytes(2, "big")
            out += struct.pack(e + "IIII", sec + k * span, frac, incl, orig) + bytes(pkt)
    return bytes(out)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


def have(cmd: str) -> bool:
    return shutil.which(cmd) is not None
