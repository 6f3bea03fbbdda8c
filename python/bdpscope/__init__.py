"""bdpscope: what limited this TCP flow? tcpdump captures as polars data frames.

>>> import bdpscope
>>> flows = bdpscope.analyze("capture.pcap.gz")          # one row per flow
>>> flows.select("client_addr", "server_port", "verdict", "bdp_bytes")
>>> doc = bdpscope.report("capture.pcap.gz")             # the `analyze --format json` document
>>> segs = bdpscope.packets("capture.pcap.gz", flow=0)    # one row per TCP segment

A *source* is a path (``str`` or ``os.PathLike``), ``bytes``, or any binary file-like
object with ``read`` (an open file, ``io.BytesIO``, an fsspec or pyarrow.fs stream from
S3 or HDFS: no temporary file). pcap, pcapng, either gzip- or zstd-compressed, recognised
by content as on the command line.

The analysis is the library's (the same as ``bdpscope analyze``), run with the GIL
released, so Python threads analyse captures in parallel. Tables come over through
Arrow (no Python object per row). A capture that is not one raises
:class:`CaptureError` (a ``ValueError``) with the command line's message; a capture cut
short returns what was read, with a :func:`warnings.warn` saying where it stopped.

The columns and their types are in docs/tables.md of the repository.
"""

from __future__ import annotations

import json
import warnings as _warnings
from typing import Any, Iterable, Optional, Union

import polars as pl

from . import _native
from ._native import CaptureError

__all__ = [
    "CaptureError",
    "CaptureWarning",
    "analyze",
    "report",
    "packets",
    "FLOWS_SCHEMA_VERSION",
    "__version__",
]

__version__ = _native.VERSION
FLOWS_SCHEMA_VERSION = _native.FLOWS_SCHEMA_VERSION


class CaptureWarning(UserWarning):
    """A capture that could be read only in part (cut short, damaged after some
    records), or whose connections the memory budget ended early: the message says
    where and what, as the command line's warning does."""


def _warn(messages: Iterable[str]) -> None:
    for m in messages:
        # stacklevel 3: the caller of analyze()/report()/packets().
        _warnings.warn(m, CaptureWarning, stacklevel=3)


def _frame(stream: Any) -> pl.DataFrame:
    return pl.DataFrame(stream)


def _rate(link_rate: Optional[float]) -> Optional[float]:
    if link_rate is None:
        return None
    if isinstance(link_rate, bool) or not isinstance(link_rate, (int, float)):
        raise TypeError("link_rate is the bottleneck rate in bits per second (a number), e.g. 50e6")
    if not link_rate > 0:
        raise ValueError(f"link_rate must be positive bits per second, not {link_rate!r}")
    return float(link_rate)


def analyze(source: Any, *, link_rate: Optional[float] = None, all: bool = False, jobs: int = 0) -> pl.DataFrame:
    """The flows of a capture, one row per flow: the columns and types of ``bdpscope
    batch``'s flows.parquet (docs/tables.md).

    ``link_rate``: the bottleneck rate in bits/s, if you know it (``--link-rate``);
    ``all``: also the connection attempts a flood or scan finding summarises
    (``--all``); ``jobs``: analysis threads, 0 for one per core (``-j``).
    """
    stream, warns = _native.analyze(source, _rate(link_rate), bool(all), int(jobs))
    _warn(warns)
    return _frame(stream)


def report(source: Any, *, link_rate: Optional[float] = None, all: bool = False, jobs: int = 0) -> dict:
    """The whole ``bdpscope analyze --format json`` document: ``{"flows": [...],
    "captures": [...]}`` as Python dicts, lists and numbers."""
    text, warns = _native.report(source, _rate(link_rate), bool(all), int(jobs))
    _warn(warns)
    return json.loads(text)


def packets(source: Any, flow: Union[None, int, Iterable[int]] = None) -> pl.DataFrame:
    """Every TCP segment of the capture (of flow ``flow``, or of the flows listed), one
    row each, with the tracker's view of it: the columns of ``bdpscope packets``, typed
    (``time`` a UTC timestamp in nanoseconds, flags as tcpdump writes them)."""
    if flow is None:
        flows: list = []
    elif isinstance(flow, int) and not isinstance(flow, bool):
        flows = [flow]
    else:
        flows = [int(f) for f in flow]
    stream, warns = _native.packets(source, flows)
    _warn(warns)
    return _frame(stream)
