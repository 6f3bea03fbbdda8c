#!/usr/bin/env bash
# The Python package next to the command line on one capture: `analyze` (the flows) and
# `packets` (every segment), wall time and peak RSS of each (GNU time), best of RUNS.
#
#   bench/python.sh CAPTURE [RUNS]      (PYTHON: a python with bdpscope installed;
#                                        BIN: the bdpscope binary, target/release's by default)
set -euo pipefail
cap=${1:?capture}
runs=${2:-3}
bin=${BIN:-$(dirname "$0")/../target/release/bdpscope}
py=${PYTHON:-python3}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

measure() { # label command...
    local best="" rss=""
    for _ in $(seq "$runs"); do
        local out t m
        /usr/bin/time -o "$tmp" -f '%e %M' "${@:2}" >/dev/null 2>/dev/null
        out=$(tail -1 "$tmp")
        t=${out% *} m=${out#* }
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
    done
    printf '%-34s %8.2f s %9.0f MB\n' "$1" "$best" "$((rss / 1024))"
}

echo "capture: $cap ($(du -h "$cap" | cut -f1)); best of $runs"
measure "cli analyze --format json" "$bin" analyze "$cap" --format json
measure "python analyze()" "$py" -c "import sys, bdpscope; bdpscope.analyze(sys.argv[1])" "$cap"
measure "cli packets (CSV to /dev/null)" "$bin" packets "$cap"
measure "python packets()" "$py" -c "import sys, bdpscope; df = bdpscope.packets(sys.argv[1]); print(df.height)" "$cap"
measure "python import only" "$py" -c "import bdpscope"
