#!/usr/bin/env bash
# Flat-memory check (issue 2, item 5): peak RSS of `bdpscope analyze` on a capture and on
# a 10x larger one with the same per-flow structure must be about the same, and < 64 MB.
#
#   bench/flat-memory.sh [-r RUNS] [--packets] SMALL.pcap LARGE.pcap [MORE.pcap ...]
#
# Runs `bdpscope analyze --format json FILE >/dev/null` RUNS times (default 3) on each
# file under /usr/bin/time and prints, per file: packets, wall best/median, peak RSS
# (largest of the runs) and the RSS ratio against the first file. With --packets,
# `bdpscope packets FILE` is measured the same way (one run: it is slower).
# Make the files with bench/make-capture.sh (live: -n 5000000 and -x10, the same flows
# 10x longer) or bench/make-capture.sh -r 10 (ten copies one after another: 10x flows).
# Environment: BDPSCOPE=path (default target/release/bdpscope of this checkout).
set -euo pipefail

RUNS=3
PACKETS=0
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="${BDPSCOPE:-$HERE/../target/release/bdpscope}"
while [ $# -gt 0 ]; do
    case "$1" in
        -r) RUNS="$2"; shift 2 ;;
        --packets) PACKETS=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 [-r RUNS] [--packets] SMALL.pcap LARGE.pcap [...]" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
BIN_MTIME=$(date -u -r "$BIN" +'%F %T')
cp "$BIN" "$TMP/bdpscope"; BIN="$TMP/bdpscope"

one() {   # one FILE CMD -> "wall rss"
    local f="$1" cmd="$2" t0 t1 rss
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$TMP/t" "$BIN" $cmd $( [ "$cmd" = analyze ] && echo --format json ) "$f" >/dev/null 2>"$TMP/err" || true
    t1=$(date +%s%N)
    rss=$(tail -1 "$TMP/t")
    awk -v a="$t0" -v b="$t1" -v r="$rss" 'BEGIN { printf "%.3f %d\n", (b - a) / 1e9, r }'
}

echo "## flat memory — $(date -u +'%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "bdpscope $("$BIN" --version | cut -d' ' -f2), built $BIN_MTIME UTC, sha256 $(sha256sum "$BIN" | cut -c1-12); $RUNS run(s) per file"
echo
echo "| command | file | packets | flows (tcptrace) | size | wall best (s) | wall median (s) | packets/s best | peak RSS (MB) | RSS / first |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for cmd in analyze $( [ "$PACKETS" = 1 ] && echo packets ); do
    runs=$RUNS; [ "$cmd" = packets ] && runs=1
    first=""
    for f in "$@"; do
        n=$(capinfos -c -M "$f" | awk -F'\t|: *' '/Number of packets/ {print $NF}')
        flows=$(tcptrace -n "$f" 2>/dev/null | grep -c "^ *[0-9]*: [0-9a-f.:]* - " || true)
        cat "$f" > /dev/null
        : > "$TMP/runs"
        for i in $(seq 1 "$runs"); do
            one "$f" "$cmd" | tee -a "$TMP/runs" | sed "s|^|  $cmd $(basename "$f") run $i: |" >&2
        done
        read -r best med rss < <(sort -n "$TMP/runs" | awk '{ w[NR] = $1; if ($2 > m) m = $2 }
            END { printf "%s %s %d\n", w[1], (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2, m }')
        [ -z "$first" ] && first=$rss
        awk -v c="$cmd" -v f="$(basename "$f")" -v n="$n" -v fl="$flows" -v sz="$(du -h "$f" | cut -f1)" \
            -v b="$best" -v m="$med" -v r="$rss" -v r0="$first" 'BEGIN {
            printf "| `%s` | %s | %d | %s | %s | %.2f | %.2f | %.2f M | %.1f | %.2f |\n", c, f, n, fl, sz, b, m, n / b / 1e6, r / 1024, r / r0 }'
    done
done
