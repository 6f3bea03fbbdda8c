#!/usr/bin/env bash
# Profile `bdpscope analyze --format json CAPTURE` (issue 2, item 5: where the time goes).
#
#   bench/profile.sh [-F HZ] [-o OUTDIR] CAPTURE
#
# perf record (apt-get install -y linux-perf) with the software event cpu-clock — this
# machine's VM has no hardware counters (`perf stat -e instructions true` says "not
# supported"), but timer sampling works — and DWARF call graphs: the release binary keeps
# no frame pointers, so `-g` (fp) gives garbage callers; --call-graph dwarf unwinds through
# .eh_frame. The binary has its symbol table but no debug info, so inlined functions are
# charged to their caller.
# Writes to OUTDIR (default bench/results): profile-<capture>.txt with
#   1. self time per function (perf report --no-children)
#   2. inclusive time per function (--children)
#   3. the nearest callers of each hot function (who calls memcpy, say)
# perf.data itself (large) goes next to the capture, outside the repository.
# If perf record cannot run, falls back to valgrind --tool=callgrind on a 500 k-packet
# prefix (instruction counts; repeatable under load).
# Environment: BDPSCOPE=path (default target/release/bdpscope of this checkout).
set -euo pipefail

HZ=1999
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR="$HERE/results"
BIN="${BDPSCOPE:-$HERE/../target/release/bdpscope}"
while [ $# -gt 0 ]; do
    case "$1" in
        -F) HZ="$2"; shift 2 ;;
        -o) OUTDIR="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: $0 [-F HZ] [-o OUTDIR] CAPTURE" >&2; exit 2; }
CAP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$OUTDIR"
NAME=$(basename "${CAP%.*}")
OUT="$OUTDIR/profile-$NAME.txt"
DATA="${CAP%.*}.perf.data"

# a fixed copy: other sessions rebuild target/release; perf resolves symbols by build id
BIN_MTIME=$(date -u -r "$BIN" +'%F %T')
SNAP="${CAP%.*}.bdpscope-profiled"
cp "$BIN" "$SNAP"

cat "$CAP" > /dev/null
{
    echo "# profile of: bdpscope analyze --format json $CAP"
    echo "# $(date -u +'%F %T UTC'); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# bdpscope $("$SNAP" --version | cut -d' ' -f2), built $BIN_MTIME UTC, sha256 $(sha256sum "$SNAP" | cut -c1-12); copy profiled: $SNAP"
} > "$OUT"

if perf record -N -e cpu-clock -F "$HZ" --call-graph dwarf,16384 -o "$DATA" -- \
        "$SNAP" analyze --format json "$CAP" > /dev/null 2> "$DATA.log"; then
    echo "# perf record -e cpu-clock -F $HZ --call-graph dwarf,16384; $(grep -o '([0-9]* samples)' "$DATA.log")" >> "$OUT"
    rep() { perf report -i "$DATA" --stdio --sort symbol "$@" 2>/dev/null | grep -v '^#' | grep -v '^$'; }
    {
        echo
        echo "## 1. self time per function (top 40)"
        rep --no-children -g none --percent-limit 0.3 | head -40
        echo
        echo "## 2. inclusive time per function, children included (top 45)"
        rep --children -g none --percent-limit 1 | head -45
        echo
        echo "## 3. the two nearest callers of each function with >= 2% self time (percent of all samples)"
        rep --no-children --max-stack 3 -g caller,0.5,callee,function,percent --percent-limit 2 | head -200
    } >> "$OUT"
else
    echo "perf record failed ($(tail -1 "$DATA.log")); falling back to callgrind on 500k packets" >&2
    PREFIX="${CAP%.*}.first500k.pcap"
    [ -s "$PREFIX" ] || editcap -F pcap -r "$CAP" "$PREFIX" 1-500000
    valgrind --tool=callgrind --callgrind-out-file="${CAP%.*}.callgrind.out" \
        "$SNAP" analyze --format json "$PREFIX" > /dev/null 2> "$DATA.log"
    { echo "# valgrind --tool=callgrind on $PREFIX"; echo
      callgrind_annotate --inclusive=no "${CAP%.*}.callgrind.out" | head -60
      echo; callgrind_annotate --inclusive=yes "${CAP%.*}.callgrind.out" | head -60; } >> "$OUT"
fi
echo "written $OUT" >&2
