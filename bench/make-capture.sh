#!/usr/bin/env bash
# Make a big, real TCP capture for the benchmark (issue 2, "Done when" item 5).
#
#   bench/make-capture.sh [-n PACKETS] [-P FLOWS] [-b RATE] [OUT]
#   bench/make-capture.sh -x10 [OUT]          # 50 M packets, same flows, 10x longer
#   bench/make-capture.sh -r K [-g GAP] IN OUT  # K time-shifted, re-addressed copies of IN
#
# Live mode (default): two network namespaces (bench_cli, bench_srv) joined by a veth
# pair (bench_c <-> bench_s, MTU 1500, tso/gso/gro/tx-checksum offloads OFF and verified),
# iperf3 -P FLOWS from bench_cli to bench_srv, and `tcpdump -s 128 -c PACKETS -w OUT` on
# the server's end. tcpdump stops at exactly PACKETS packets; then iperf3 is stopped, so
# the data flows are cut mid-transfer (handshakes are in the capture, FINs are not).
# Every flow carries a share of the packets, so a 10x larger capture (-x10) has the
# same flows, each 10x longer: that is what the flat-memory check wants.
#
# iperf3 is paced (-b RATE per flow) so that tcpdump keeps up on a 2-core machine; the
# kernel drop count tcpdump prints is saved beside the capture (OUT.log) and the script
# fails if any packet was dropped (a dropped packet is a hole the analyser would see).
#
# Replay mode (-r K IN OUT): mergecap -a of K copies of IN, copy i shifted by i x (the
# capture's duration + GAP s, default 2; -g 301 outlasts bdpscope's 5-minute idle timeout
# so each copy's flows are evicted before the next starts) (editcap -t) and moved from 10.211.0.0/24 (the live mode's
# addresses; -N CIDR for another) to 10.211.i.0/24 (tcprewrite --pnat), so every copy's
# flows are new flows that start after the previous copy's flows went idle. This makes
# Kx the flows one after another (each as long as in IN), not longer flows: the quick
# alternative to -x10 for memory checks, and it needs ~2x OUT of temporary space.
# Without the re-addressing the copies would repeat the same 4-tuples and ISNs with no
# FIN between them, which no tool can tell from retransmissions.
#
# Needs root (ip netns), iproute2, ethtool, tcpdump, iperf3 (apt-get install -y iperf3),
# and for -r: editcap, mergecap, capinfos (wireshark-common), tcprewrite (tcpreplay).
# Captures are large (5 M packets ~ 0.7 GB) and belong outside the repository.
set -euo pipefail

PACKETS=5000000
FLOWS=4
RATE=400M          # per flow; 4 x 400 Mbit/s ~ 140 k data segments/s
REPLAY=0
NET=10.211.0.0/24
GAP=2
OUT_DEFAULT=/work/bench/big.pcap

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
    case "$1" in
        -n) PACKETS="$2"; shift 2 ;;
        -P) FLOWS="$2"; shift 2 ;;
        -b) RATE="$2"; shift 2 ;;
        -x10) PACKETS=$((PACKETS * 10)); OUT_DEFAULT=/work/bench/big10.pcap; shift ;;
        -r) REPLAY="$2"; shift 2 ;;
        -N) NET="$2"; shift 2 ;;
        -g) GAP="$2"; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) echo "unknown option $1" >&2; usage 2 ;;
        *) break ;;
    esac
done

# ---------------------------------------------------------------- replay mode
if [ "$REPLAY" -gt 0 ]; then
    [ $# -eq 2 ] || { echo "usage: $0 -r K [-g GAP] [-N CIDR/24] IN OUT" >&2; exit 2; }
    [ "$REPLAY" -le 256 ] || { echo "-r: at most 256 copies (one /24 each)" >&2; exit 2; }
    IN="$1"; OUT="$2"
    mkdir -p "$(dirname "$OUT")"
    TMP=$(mktemp -d "$(dirname "$OUT")/.replay.XXXXXX")
    trap 'rm -rf "$TMP"' EXIT
    # duration in seconds (capinfos -u prints "Capture duration: 12.345678 seconds")
    DUR=$(capinfos -u -M "$IN" | awk -F': *' '/Capture duration/ {print $2+0}')
    STEP=$(awk -v d="$DUR" -v g="$GAP" 'BEGIN { printf "%.6f", int(d) + g }')   # a gap of >= GAP-1 s
    parts=()
    for i in $(seq 0 $((REPLAY - 1))); do
        shift_s=$(awk -v s="$STEP" -v i="$i" 'BEGIN { printf "%.6f", s * i }')
        if [ "$i" -eq 0 ]; then
            parts+=("$IN")
        else
            editcap -F pcap -t "$shift_s" "$IN" "$TMP/shifted.pcap"
            # 10.211.0.0/24 -> 10.211.i.0/24 (the third octet of NET replaced by i)
            to=$(echo "$NET" | awk -F'[./]' -v i="$i" '{ printf "%s.%s.%d.%s/%s", $1, $2, i, $4, $5 }')
            tcprewrite --pnat="$NET:$to" -i "$TMP/shifted.pcap" -o "$TMP/part$i.pcap" 2>/dev/null
            rm -f "$TMP/shifted.pcap"
            parts+=("$TMP/part$i.pcap")
        fi
    done
    mergecap -F pcap -a -w "$OUT" "${parts[@]}"
    echo "$OUT: $REPLAY copies of $IN, each shifted by ${STEP}s, copy i in ${NET%.*.*}.i.0/24"
    capinfos -c -u "$OUT" | tail -n +2
    exit 0
fi

# ---------------------------------------------------------------- live mode
[ $# -le 1 ] || usage 2
OUT="${1:-$OUT_DEFAULT}"
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
LOG="$OUT.log"
for t in ip ethtool tcpdump iperf3; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install -y iperf3 tcpdump ethtool iproute2)" >&2; exit 2; }
done

NS_C=bench_cli; NS_S=bench_srv
IF_C=bench_c;   IF_S=bench_s
IP_C=10.211.0.1; IP_S=10.211.0.2
PIDS=()

cleanup() {
    set +e
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    ip netns del "$NS_C" 2>/dev/null
    ip netns del "$NS_S" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# a previous run killed with -9 may have left them behind: they are ours (bench_ prefix)
ip netns del "$NS_C" 2>/dev/null || true
ip netns del "$NS_S" 2>/dev/null || true

ip netns add "$NS_C"
ip netns add "$NS_S"
ip link add "$IF_C" netns "$NS_C" type veth peer name "$IF_S" netns "$NS_S"
for side in "$NS_C $IF_C $IP_C" "$NS_S $IF_S $IP_S"; do
    set -- $side
    ip -n "$1" link set lo up
    ip -n "$1" link set "$2" mtu 1500
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" link set "$2" up
    ip netns exec "$1" ethtool -K "$2" tso off gso off gro off tx off >/dev/null 2>&1 || true
    # verify: every one of these must now read "off"
    bad=$(ip netns exec "$1" ethtool -k "$2" | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-checksumming):' | grep -v ': off' || true)
    if [ -n "$bad" ]; then echo "offloads still on for $2:"$'\n'"$bad" >&2; exit 1; fi
    mtu=$(ip -n "$1" -o link show "$2" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
    [ "$mtu" = 1500 ] || { echo "$2: mtu $mtu, want 1500" >&2; exit 1; }
done
{
    echo "# $(date -u +%FT%TZ) make-capture.sh -n $PACKETS -P $FLOWS -b $RATE $OUT"
    echo "# uname: $(uname -r); iperf3: $(iperf3 --version | head -1); $(tcpdump --version 2>&1 | head -1)"
    echo "# offloads ($IF_C, $IF_S):"
    for side in "$NS_C $IF_C" "$NS_S $IF_S"; do
        set -- $side
        ip netns exec "$1" ethtool -k "$2" | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-checksumming):' | sed "s/^/#   $2 /"
    done
} > "$LOG"

ip netns exec "$NS_S" iperf3 -s -1 -B "$IP_S" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5

# -B 262144: a 256 MB kernel buffer, so bursts do not overflow while tcpdump writes
ip netns exec "$NS_S" tcpdump -n -i "$IF_S" -s 128 -B 262144 -c "$PACKETS" -w "$OUT" tcp 2>>"$LOG" &
TCPDUMP=$!
PIDS+=($TCPDUMP)
sleep 1

ip netns exec "$NS_C" iperf3 -c "$IP_S" -P "$FLOWS" -b "$RATE" -t 86400 -i 0 >/dev/null 2>&1 &
IPERF=$!
PIDS+=($IPERF)

echo "capturing $PACKETS packets of $FLOWS flows on $IF_S into $OUT ..." >&2
start=$(date +%s)
while kill -0 "$TCPDUMP" 2>/dev/null; do
    if ! kill -0 "$IPERF" 2>/dev/null; then
        echo "iperf3 ended before tcpdump had $PACKETS packets" >&2
        kill -INT "$TCPDUMP"; sleep 1; break
    fi
    sleep 1
done
wait "$TCPDUMP" || true
end=$(date +%s)
cat "$LOG" | grep -v '^#' >&2 || true
echo "# capture took $((end - start)) s" >> "$LOG"

captured=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$LOG" | tail -1)
dropped=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel.*/\1/p' "$LOG" | tail -1)
ls -l "$OUT" >&2
if [ "${dropped:-0}" != 0 ]; then
    echo "WARNING: tcpdump reports $dropped packets dropped by the kernel; lower -b and retry" >&2
    exit 1
fi
[ "${captured:-0}" -ge "$PACKETS" ] || { echo "only ${captured:-0} packets captured" >&2; exit 1; }
echo "ok: $captured packets, 0 dropped, in $((end - start)) s -> $OUT" >&2
