#!/usr/bin/env bash
# Benchmark bdpscope against tcptrace and tshark on one capture (issue 2, item 5).
#
#   bench/run.sh [-r RUNS] [-w SECONDS] [-p PREFIX_PACKETS] [-o RESULTS.md] [--no-tshark] CAPTURE
#
# In one run, on the same file, with the page cache warmed first, each command RUNS
# times (default 3) under /usr/bin/time:
#   cat CAPTURE                                   the floor: reading the file
#   capinfos -c CAPTURE                           libpcap/wiretap reading every record
#   bdpscope analyze --format json CAPTURE        the tool
#   bdpscope packets CAPTURE                      the tool, a CSV row per segment
#   tcptrace -n -l -r CAPTURE                     the reference the target is set against
# and on a PREFIX_PACKETS-packet prefix of CAPTURE (default 1,000,000, made once with
# `editcap -r CAPTURE PREFIX 1-N` next to the capture), because tshark does ~50 k
# packets/s: tshark -n -q -r PREFIX -z conv,tcp, with bdpscope analyze and tcptrace
# repeated on the prefix so that all three are compared on one file.
# Output goes to stdout and into RESULTS.md (default bench/RESULTS.md, below the line
# "<!-- runs of bench/run.sh, newest first -->" if it has one): per command the
# best and median wall time of the runs, packets/s from each, the least CPU time
# (user+sys) of the runs and packets per CPU-second, and the peak RSS (largest of the
# runs); the 1-minute load average is read before every run and its range is shown.
#
# -w SECONDS: before each run, wait up to SECONDS for the machine to be quiet: at most one
# other runnable task on average over a second (other sessions build and test Rust here);
# the table says how many runs started quiet.
# Environment: BDPSCOPE=path (default target/release/bdpscope of this checkout).
set -euo pipefail

RUNS=3
WAIT=0
PREFIX_N=1000000
TSHARK=1
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RESULTS="$HERE/RESULTS.md"
BIN="${BDPSCOPE:-$ROOT/target/release/bdpscope}"

while [ $# -gt 0 ]; do
    case "$1" in
        -r) RUNS="$2"; shift 2 ;;
        -p) PREFIX_N="$2"; shift 2 ;;
        -o) RESULTS="$2"; shift 2 ;;
        -w) WAIT="$2"; shift 2 ;;
        --no-tshark) TSHARK=0; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: $0 [-r RUNS] [-p PREFIX_PACKETS] [-o OUT.md] [--no-tshark] CAPTURE" >&2; exit 2; }
CAP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -r "$CAP" ] || { echo "no capture $CAP" >&2; exit 2; }
[ -x "$BIN" ] || { echo "no binary $BIN (cargo build --release)" >&2; exit 2; }
for t in tcptrace tshark capinfos editcap /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install -y tcptrace tshark time)" >&2; exit 2; }
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# other sessions may rebuild target/release while this runs: measure one fixed copy
BIN_MTIME=$(date -u -r "$BIN" +'%F %T')
cp "$BIN" "$TMP/bdpscope"; ORIG_BIN="$BIN"; BIN="$TMP/bdpscope"

load1() { cut -d' ' -f1 /proc/loadavg; }
# runnable tasks besides this sampler, averaged over 5 samples 0.2 s apart (the 4th field
# of /proc/loadavg, R/T, counts the task reading it)
others() {
    local i r sum=0
    for i in 1 2 3 4 5; do r=$(cut -d' ' -f4 /proc/loadavg); sum=$((sum + ${r%/*} - 1)); sleep 0.2; done
    awk -v s="$sum" 'BEGIN { printf "%.1f", s / 5 }'
}
# wait_quiet -> prints 1 if, when the run started, at most one other task was runnable on
# average (one core left for the benchmark), after waiting up to WAIT seconds for that
wait_quiet() {
    local t=0 o
    o=$(others)
    while awk -v o="$o" 'BEGIN { exit !(o > 1) }' && [ "$t" -lt "$WAIT" ]; do sleep 4; t=$((t + 5)); o=$(others); done
    if awk -v o="$o" 'BEGIN { exit !(o > 1) }'; then echo 0; else echo 1; fi
}
count() { capinfos -c -M "$1" | awk -F'\t|: *' '/Number of packets/ {print $NF}'; }

ROWS="$TMP/rows"      # label|file|packets|best|median|cpu|rss|loadmin|loadmax|rc|quiet
: > "$ROWS"

# measure LABEL FILE PACKETS -- CMD...   (stdout of CMD goes to /dev/null)
measure() {
    local label="$1" file="$2" n="$3"; shift 4
    local i walls="" rsss="" cpus="" loads="" rcs="" quiet=0 q
    for i in $(seq 1 "$RUNS"); do
        q=$(wait_quiet); quiet=$((quiet + q))
        loads="$loads $(load1)"
        local rc=0 t0 t1 wall rss usr sys
        t0=$(date +%s%N)
        /usr/bin/time -f '%e %M %U %S' -o "$TMP/t" "$@" >/dev/null 2>"$TMP/err" || rc=$?
        t1=$(date +%s%N)
        # /usr/bin/time writes "Command exited with non-zero status N" first when rc != 0;
        # its %e has 10 ms resolution, so the wall time is taken with date +%s%N instead
        read -r _ rss usr sys < <(tail -1 "$TMP/t")
        wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
        walls="$walls $wall"; rsss="$rsss $rss"
        cpus="$cpus $(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')"
        rcs="$rcs $rc"
        printf '  %-34s run %d: %7ss  %7s KB  rc=%s  load %s  quiet %s\n' "$label" "$i" "$wall" "$rss" "$rc" "$(load1)" "$q" >&2
        if [ "$rc" -gt 1 ]; then echo "    stderr: $(head -3 "$TMP/err")" >&2; fi
    done
    awk -v label="$label" -v file="$file" -v n="$n" -v walls="$walls" -v rsss="$rsss" \
        -v cpus="$cpus" -v loads="$loads" -v rcs="$rcs" -v quiet="$quiet/$RUNS" 'BEGIN {
        k = split(walls, w, " "); split(rsss, r, " "); split(cpus, c, " "); split(loads, l, " ")
        split(rcs, e, " ")
        # best = smallest wall; median by sorting a copy
        best = 1; for (i = 2; i <= k; i++) if (w[i] + 0 < w[best] + 0) best = i
        for (i = 1; i <= k; i++) s[i] = w[i] + 0
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
        med = (k % 2) ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2
        rmax = 0; for (i = 1; i <= k; i++) if (r[i] + 0 > rmax) rmax = r[i] + 0
        cmin = 1e9; for (i = 1; i <= k; i++) if (c[i] + 0 < cmin) cmin = c[i] + 0
        lmin = 1e9; lmax = 0; for (i = 1; i <= k; i++) { if (l[i] + 0 < lmin) lmin = l[i] + 0; if (l[i] + 0 > lmax) lmax = l[i] + 0 }
        rc = ""; for (i = 1; i <= k; i++) if (index("," rc ",", "," e[i] ",") == 0) rc = rc (rc == "" ? "" : ",") e[i]
        printf "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n", label, file, n, w[best], med, cmin, rmax, lmin, lmax, rc, quiet
    }' >> "$ROWS"
}

echo "capture: $CAP" >&2
N=$(count "$CAP")
echo "packets: $N (capinfos -c)" >&2

PREFIX=""
if [ "$TSHARK" = 1 ]; then
    PREFIX="${CAP%.*}.first$((PREFIX_N / 1000))k.pcap"
    if [ ! -s "$PREFIX" ] || [ "$PREFIX" -ot "$CAP" ]; then
        echo "making prefix $PREFIX" >&2
        editcap -F pcap -r "$CAP" "$PREFIX" "1-$PREFIX_N"
    fi
    NP=$(count "$PREFIX")
fi

# warm the page cache (twice: the second read is the one that should be all hits)
cat "$CAP" > /dev/null; cat "$CAP" > /dev/null
[ -n "$PREFIX" ] && cat "$PREFIX" > /dev/null

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
DATE=$(date -u +'%Y-%m-%d %H:%M UTC')

echo "full capture, $RUNS runs each:" >&2
measure "cat (read the file)"          full "$N" -- cat "$CAP"
measure "capinfos -c"                  full "$N" -- capinfos -c "$CAP"
measure "bdpscope analyze --format json" full "$N" -- "$BIN" analyze --format json "$CAP"
measure "bdpscope packets"             full "$N" -- "$BIN" packets "$CAP"
measure "tcptrace -n -l -r"            full "$N" -- tcptrace -n -l -r "$CAP"
if [ -n "$PREFIX" ]; then
    echo "prefix ($NP packets), $RUNS runs each:" >&2
    measure "bdpscope analyze --format json" prefix "$NP" -- "$BIN" analyze --format json "$PREFIX"
    measure "tcptrace -n -l -r"            prefix "$NP" -- tcptrace -n -l -r "$PREFIX"
    measure "tshark -n -q -z conv,tcp"     prefix "$NP" -- tshark -n -q -r "$PREFIX" -z conv,tcp
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
{
    echo "## bdpscope benchmark — $DATE"
    echo
    echo "- capture: \`$CAP\`, $N packets, $(du -h "$CAP" | cut -f1)B ($(capinfos -u -M "$CAP" | awk -F': *' '/Capture duration/ {printf "%.1f s of traffic", $2}'))"
    [ -n "$PREFIX" ] && echo "- prefix for tshark: first $NP packets (\`editcap -r CAP PREFIX 1-$PREFIX_N\`)"
    echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r)"
    echo "- load average (1/5/15 min): $LOAD_START at the start, $LOAD_END at the end"
    echo "- bdpscope: $("$BIN" --version) ($ORIG_BIN, built $BIN_MTIME UTC, sha256 $(sha256sum "$BIN" | cut -c1-12), tree at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$( [ -n "$(git -C "$ROOT" status --porcelain -- src 2>/dev/null)" ] && echo ' + uncommitted src changes'))"
    echo "- $(tcptrace -v 2>&1 | grep -m1 -o 'version [0-9.]*' | sed 's/^/tcptrace /'); $(tshark --version | head -1); capinfos $(capinfos -v | head -1 | grep -o '[0-9][0-9.]*' | head -1)"
    echo "- $RUNS runs of each, page cache warm, stdout to /dev/null, stderr to a file (no progress bar)."
    echo "  wall = best / median of the runs; packets/s from each; CPU = the least user+sys of the runs, and packets per CPU-second from it"
    echo "  (less sensitive to other processes than wall time);"
    echo "  RSS = the largest peak RSS of the runs (/usr/bin/time %M); x tcptrace = packets/s (best wall; least CPU) over tcptrace's on the same file;"
    echo "  load 1m = range of the 1-minute load average before the runs; quiet runs = runs started with at most one other runnable task (waited up to ${WAIT}s for that)."
    echo
    echo "| file | command | wall best (s) | wall median (s) | packets/s best | packets/s median | CPU (s) | packets/CPU-s | peak RSS (MB) | x tcptrace (wall) | x tcptrace (CPU) | load 1m | quiet runs | exit |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
    awk -F'|' '
        { lab[NR] = $1; file[NR] = $2; n[NR] = $3; best[NR] = $4; med[NR] = $5; cpu[NR] = $6; rss[NR] = $7; lmin[NR] = $8; lmax[NR] = $9; rc[NR] = $10; qu[NR] = $11
          if ($1 ~ /^tcptrace/) { tt[$2] = ($4 > 0) ? $3 / $4 : 0; tc[$2] = ($6 > 0) ? $3 / $6 : 0 } }
        function rate(n, t,  r) { if (t <= 0) return "—"; r = n / t
            return (r >= 1e6) ? sprintf("%.2f M", r / 1e6) : sprintf("%.1f k", r / 1e3) }
        END { for (i = 1; i <= NR; i++) {
            x = (tt[file[i]] > 0 && best[i] > 0) ? (n[i] / best[i]) / tt[file[i]] : -1
            x = (x < 0) ? "—" : (x < 0.1) ? sprintf("%.3fx", x) : sprintf("%.1fx", x)
            y = (tc[file[i]] > 0 && cpu[i] > 0) ? (n[i] / cpu[i]) / tc[file[i]] : -1
            y = (y < 0) ? "—" : (y < 0.1) ? sprintf("%.3fx", y) : sprintf("%.1fx", y)
            printf "| %s | `%s` | %.3f | %.3f | %s | %s | %.2f | %s | %.1f | %s | %s | %s–%s | %s | %s |\n", \
                file[i] " (" n[i] ")", \
                lab[i], best[i], med[i], rate(n[i], best[i]), rate(n[i], med[i]), cpu[i], rate(n[i], cpu[i]), rss[i] / 1024, x, y, lmin[i], lmax[i], qu[i], rc[i]
        } }' "$ROWS"
    echo
} > "$TMP/report.md"

cat "$TMP/report.md"
MARK='<!-- runs of bench/run.sh, newest first -->'
if [ -f "$RESULTS" ] && grep -qxF "$MARK" "$RESULTS"; then
    # keep what is above the marker (the summary), put this run right below it
    awk -v mark="$MARK" -v rep="$TMP/report.md" '
        { print } $0 == mark { print ""; while ((getline l < rep) > 0) print l }' "$RESULTS" > "$TMP/all.md"
    cp "$TMP/all.md" "$RESULTS"
elif [ -f "$RESULTS" ] && [ "$RESULTS" = "$HERE/RESULTS.md" ]; then
    { cat "$TMP/report.md"; echo; cat "$RESULTS"; } > "$TMP/all.md"
    cp "$TMP/all.md" "$RESULTS"
else
    cp "$TMP/report.md" "$RESULTS"
fi
echo "written to $RESULTS" >&2
