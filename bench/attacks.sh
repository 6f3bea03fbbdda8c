#!/usr/bin/env bash
# Floods, scans and many flows (issue 15): generate the captures, then measure bdpscope
# against tcptrace and tshark on each — packets/s, peak RSS, bytes per live connection.
#
#   bench/attacks.sh [-o RESULTS.md] [-r RUNS] [--no-tshark] [--only NAME] [DATA_DIR]
#
# Captures (made once in DATA_DIR, default /work/bench-data, by bench/gen-attacks.py;
# never in the repository):
#   flood1m    1,000,000 SYNs from random sources to one port over 10 s, with a real
#              transfer spliced in at +3 s (fixtures/rcvbuf_16k/client.pcap.gz, time-shifted
#              with editcap -t, merged by time with mergecap)
#   flood10m   10,000,000 SYNs over 100 s, the same transfer at +50 s
#   scan       one scanner, SYN to all 65,535 ports of one host (RST/ACK from the closed
#              ones, SYN/ACK from 22, 80, 443), the transfer at +1 s
#   mixN       N concurrent connections (N = 6k, 12k, 25k) for 20 s, half of them long,
#              half short and replaced as they close (~74 packets a connection)
# Each capture: `bdpscope analyze --format json` RUNS times (default 3) under
# /usr/bin/time (peak RSS, wall, CPU), once `tcptrace -n -l -r` and `tshark -n -q -z
# conv,tcp` under `ulimit -v` (4 GiB: tshark holds every conversation and would take the
# machine; a run killed by the limit is reported as such). The figures bdpscope itself
# reports (peak live connections, estimated bytes, attempt records) come from its JSON.
# For the floods and the scan the spliced transfer's flow is compared with the analysis of
# the transfer alone: every field but id, capture and first_frame must be equal.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT="$HERE/results/attacks.md"
RUNS=3
TSHARK=1
ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT="$2"; shift 2 ;;
        -r) RUNS="$2"; shift 2 ;;
        --no-tshark) TSHARK=0; shift ;;
        --only) ONLY="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
DATA="${1:-/work/bench-data}"
mkdir -p "$DATA"
BIN="${BDPSCOPE:-$ROOT/target/release/bdpscope}"
[ -x "$BIN" ] || { echo "no binary $BIN (cargo build --release)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$BIN" "$TMP/bdpscope"; BIN="$TMP/bdpscope"
TRANSFER="$ROOT/fixtures/rcvbuf_16k/client.pcap.gz"
GEN="$HERE/gen-attacks.py"
T0=1767225600  # gen-attacks.py's start

# splice GENERATED OUT OFFSET_S: the real transfer moved to T0 + OFFSET_S, merged by time
splice() {
    local start
    start=$(capinfos -a -S -M "$TRANSFER" | awk -F': *' '/First packet time/ {print $2}')
    zcat "$TRANSFER" > "$TMP/transfer.pcap"
    editcap -F pcap -t "$(awk -v s="$start" -v t="$T0" -v o="$3" 'BEGIN { printf "%.6f", t + o - s }')" \
        "$TMP/transfer.pcap" "$TMP/shifted.pcap"
    mergecap -F pcap -w "$2" "$1" "$TMP/shifted.pcap"
}

make() {
    local name="$1" f="$DATA/$1.pcap"
    [ -s "$f" ] && return 0
    echo "making $f" >&2
    case "$name" in
        flood1m) python3 "$GEN" flood 1000000 "$TMP/syn.pcap"; splice "$TMP/syn.pcap" "$f" 3 ;;
        flood10m) python3 "$GEN" flood 10000000 "$TMP/syn.pcap"; splice "$TMP/syn.pcap" "$f" 50 ;;
        scan) python3 "$GEN" scan "$TMP/scan.pcap"; splice "$TMP/scan.pcap" "$f" 1 ;;
        mix*) python3 "$GEN" mix "$f" --flows "$(echo "${name#mix}" | sed 's/k$/000/')" --duration 20 ;;
    esac
}

NAMES="flood1m flood10m scan mix6k mix12k mix25k"
[ -n "$ONLY" ] && NAMES="$ONLY"
ROWS="$TMP/rows"; : > "$ROWS"
"$BIN" analyze --format json "$TRANSFER" > "$TMP/alone.json"

for name in $NAMES; do
    make "$name"
    f="$DATA/$name.pcap"
    n=$(capinfos -c -M "$f" | awk -F': *' '/Number of packets/ {print $2}')
    best=""; rss=0; cpu=""
    for i in $(seq 1 "$RUNS"); do
        /usr/bin/time -f '%e %M %U %S' -o "$TMP/t" "$BIN" analyze --format json "$f" > "$TMP/out.json" 2> "$TMP/err" || true
        read -r wall r u s < <(tail -1 "$TMP/t")
        best=$(awk -v a="$best" -v b="$wall" 'BEGIN { print (a == "" || b < a) ? b : a }')
        cpu=$(awk -v a="$cpu" -v b="$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')" 'BEGIN { print (a == "" || b < a) ? b : a }')
        [ "$r" -gt "$rss" ] && rss=$r
        echo "  $name run $i: ${wall}s ${r} KB" >&2
    done
    facts=$(python3 - "$TMP/out.json" "$TMP/alone.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); alone = json.load(open(sys.argv[2]))
c = d["captures"][0]; k = c["connections"]; a = c["attempts"]
floods = "; ".join(f"{f['kind']} {f.get('target') or ''} ({f['attempts']} attempts, ~{f.get('distinct_sources') or f.get('distinct_ports') or ''} distinct)" for f in c["floods"]) or "none"
drop = ("id", "capture", "first_frame")
def relative(f):
    # The transfer was moved in time: absolute times are compared from its first packet.
    f = json.loads(json.dumps(f)); t0 = f["start_ts"]
    for k2 in ("start_ts", "end_ts"):
        f[k2] = round(f[k2] - t0, 6)
    for p in f.get("periods", []):
        p["start"] = round(p["start"] - t0, 6); p["end"] = round(p["end"] - t0, 6)
    for d2 in ("c2s", "s2c"):
        for k2 in ("first_data_ts", "last_data_ts"):
            if f[d2].get(k2) is not None:
                f[d2][k2] = round(f[d2][k2] - t0, 6)
    return {k2: v for k2, v in f.items() if k2 not in drop}
ref = relative(alone["flows"][0])
same = "-"
for fl in d["flows"]:
    if fl["client"] == alone["flows"][0]["client"] and fl["server"] == alone["flows"][0]["server"]:
        mine = relative(fl)
        diff = [k2 for k2 in ref if ref[k2] != mine.get(k2)]
        same = "identical" if not diff else "differs: " + ",".join(diff)
per = k["peak_bytes"] / max(k["peak_live"], 1)
print(f"{c['flows']}|{len(d['flows'])}|{a['folded']}|{k['peak_live']}|{k['peak_attempt_records']}|{k['peak_bytes']}|{per:.0f}|{k['evicted_without_data']}+{k['evicted_with_data']}|{floods}|{same}")
EOF
)
    tt="skipped"; ts="skipped"
    if command -v tcptrace >/dev/null; then
        if ( ulimit -v 4194304; /usr/bin/time -f '%e %M' -o "$TMP/tt" tcptrace -n -l -r "$f" > /dev/null 2>&1 ); then
            tt=$(awk '{printf "%.2f s, %.0f MB", $1, $2/1024}' "$TMP/tt")
        else
            tt="failed (4 GiB limit or error; $(tail -1 "$TMP/tt" | awk '{printf "%.2f s, %.0f MB", $1, $2/1024}'))"
        fi
    fi
    if [ "$TSHARK" = 1 ]; then
        if ( ulimit -v 4194304; /usr/bin/time -f '%e %M' -o "$TMP/ts" tshark -n -q -r "$f" -z conv,tcp > /dev/null 2>&1 ); then
            ts=$(awk '{printf "%.2f s, %.0f MB", $1, $2/1024}' "$TMP/ts")
        else
            ts="failed (4 GiB limit or error; $(tail -1 "$TMP/ts" | awk '{printf "%.2f s, %.0f MB", $1, $2/1024}'))"
        fi
    fi
    pps=$(awk -v n="$n" -v t="$best" 'BEGIN { printf "%.2f M", n / t / 1e6 }')
    echo "$name|$n|$best|$cpu|$pps|$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1024}')|$facts|$tt|$ts" >> "$ROWS"
done

{
    echo "## bdpscope on floods, scans and many flows — $(date -u +'%Y-%m-%d %H:%M UTC')"
    echo
    echo "- bdpscope $("$BIN" --version | cut -d' ' -f2), tree $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- \`bdpscope analyze --format json\`, best of $RUNS (wall, CPU), largest peak RSS; tcptrace -n -l -r and tshark -z conv,tcp once each under ulimit -v 4 GiB"
    echo "- flows = connections; listed = in the JSON; folded = attempts summarised by a flood finding; peak live / attempt records / est. bytes = bdpscope's own account (capture summary \`connections\`); B/conn = estimated bytes per live connection at the peak"
    echo
    echo "| capture | packets | wall (s) | CPU (s) | packets/s | peak RSS (MB) | flows | listed | folded | peak live | attempt records | est. bytes | B/conn | evicted (no data + data) | findings | transfer vs alone | tcptrace | tshark |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---|"
    awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18 }' "$ROWS"
    echo
} > "$TMP/report.md"
cat "$TMP/report.md"
mkdir -p "$(dirname "$OUT")"
if [ -f "$OUT" ]; then cat "$OUT" >> "$TMP/report.md"; fi
cp "$TMP/report.md" "$OUT"
echo "written to $OUT" >&2
