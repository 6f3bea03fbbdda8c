#!/usr/bin/env python3
"""Generate benchmark captures for issue 15: SYN floods, a port scan, a many-flow mix.

    bench/gen-attacks.py flood N OUT [--rate SYNS_PER_S] [--seed S]
    bench/gen-attacks.py scan OUT [--ports N] [--open P,P,...]
    bench/gen-attacks.py mix OUT --flows N [--duration S] [--seed S]

Plain pcap (Ethernet, microsecond stamps), written record by record with struct, so the
script needs nothing beyond Python 3. Headers only are captured (snaplen 96, as
`tcpdump -s 96`): the payload length comes from the IP header, which is what a capture of
a busy link looks like and keeps the files small.

flood: N SYNs (no reply) to 10.99.0.1:80 from random IPv4 sources and ports, spread
evenly over N / rate seconds (default rate 100,000/s: 1 M SYNs in 10 s), each with the
options Linux puts in a SYN (MSS, SACK permitted, timestamps, window scale). Splice a real
transfer in with mergecap (bench/attacks.sh does): mergecap merges by time.

scan: one scanner (10.98.0.66) probes ports 1..N (default 65,535) of 10.98.0.1 with SYNs
at 20,000 probes/s, as `nmap -sS -T5` does: closed ports answer RST/ACK, the open ones
(default 22, 80, 443) SYN/ACK, which the scanner resets.

mix: N concurrent connections (clients 10.97.x.y to 10.96.0.1:443), each opened within the
first second, then a request and a response of 2..16 segments every few seconds, some
closing early and replaced by new ones (the short flows) and the rest living for the whole
capture (the long flows); every connection ends with FINs. About 30 packets a connection.
"""
import argparse
import heapq
import random
import struct
import sys

SNAPLEN = 96
ETH = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"


def csum(data):
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip4(a):
    return bytes(int(x) for x in a.split("."))


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def syn_options(tsval):
    # MSS 1460, SACK permitted, timestamps, NOP, window scale 7 (Linux's order): 20 bytes
    return (struct.pack("!BBH", 2, 4, 1460) + struct.pack("!BB", 4, 2)
            + struct.pack("!BBII", 8, 10, tsval, 0) + struct.pack("!BBBB", 1, 3, 3, 7))


def ts_option(tsval, tsecr):
    return struct.pack("!BBBBII", 1, 1, 8, 10, tsval, tsecr)


def packet(src, dst, sport, dport, seq, ack, flags, win, payload_len, opts=b""):
    """Ethernet + IPv4 + TCP headers; returns (captured bytes, original length)."""
    thl = 20 + len(opts)
    total = 20 + thl + payload_len
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
    iph = iph[:10] + struct.pack("!H", csum(iph)) + iph[12:]
    tcph = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                       (thl // 4) << 4, flags, win, 0, 0) + opts
    frame = ETH + iph + tcph
    return frame, len(frame) + payload_len


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb", buffering=1 << 20)
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, 1))
        self.n = 0

    def put(self, t, frame, orig):
        cap = frame[:SNAPLEN]
        sec = int(t)
        usec = int(round((t - sec) * 1e6))
        if usec >= 1000000:
            sec, usec = sec + 1, usec - 1000000
        self.f.write(struct.pack("<IIII", sec, usec, len(cap), orig))
        self.f.write(cap)
        self.n += 1

    def close(self):
        self.f.close()


T0 = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC


def flood(args):
    rnd = random.Random(args.seed)
    w = Writer(args.out)
    dst = ip4("10.99.0.1")
    step = 1.0 / args.rate
    for i in range(args.n):
        src = struct.pack("!I", rnd.randrange(0x01000000, 0xDF000000))
        sport = rnd.randrange(1024, 65536)
        frame, orig = packet(src, dst, sport, 80, rnd.getrandbits(32), 0, SYN, 64240, 0,
                             syn_options(rnd.getrandbits(32)))
        w.put(T0 + i * step, frame, orig)
    w.close()
    print(f"{args.out}: {w.n} SYNs over {args.n * step:.1f} s", file=sys.stderr)


def scan(args):
    rnd = random.Random(args.seed)
    w = Writer(args.out)
    scanner, target = ip4("10.98.0.66"), ip4("10.98.0.1")
    opened = {int(p) for p in args.open.split(",") if p}
    step, rtt = 1.0 / 20000, 0.0004
    events = []
    for i, port in enumerate(range(1, args.ports + 1)):
        t = T0 + i * step
        sport = 40000 + (i % 20000)
        isn = rnd.getrandbits(32)
        events.append((t, packet(scanner, target, sport, port, isn, 0, SYN, 1024, 0,
                                 struct.pack("!BBH", 2, 4, 1460))))
        if port in opened:
            sisn = rnd.getrandbits(32)
            events.append((t + rtt, packet(target, scanner, port, sport, sisn, isn + 1, SYN | ACK,
                                           64240, 0, struct.pack("!BBH", 2, 4, 1460))))
            events.append((t + rtt + 0.00001, packet(scanner, target, sport, port, isn + 1, 0, RST, 0, 0)))
        else:
            events.append((t + rtt, packet(target, scanner, port, sport, 0, isn + 1, RST | ACK, 0, 0)))
    events.sort(key=lambda e: e[0])
    for t, (frame, orig) in events:
        w.put(t, frame, orig)
    w.close()
    print(f"{args.out}: {w.n} packets, {args.ports} ports probed", file=sys.stderr)


def connection(rnd, client, server, cport, start, end, rtt, short):
    """Yields (time, frame, orig) of one connection from `start`, its last packet by `end`."""
    c_isn, s_isn = rnd.getrandbits(32), rnd.getrandbits(32)
    tsc, tss = rnd.getrandbits(31), rnd.getrandbits(31)
    t = start
    yield t, packet(client, server, cport, 443, c_isn, 0, SYN, 64240, 0, syn_options(tsc))
    t += rtt
    yield t, packet(server, client, 443, cport, s_isn, c_isn + 1, SYN | ACK, 65160, 0, syn_options(tss))
    t += 0.0001
    cseq, sseq = c_isn + 1, s_isn + 1
    yield t, packet(client, server, cport, 443, cseq, sseq, ACK, 502, 0, ts_option(tsc, tss))
    rounds = rnd.randint(1, 3) if short else 1 << 30
    while rounds > 0 and t + 2 * rtt < end:
        rounds -= 1
        t += 0.001
        req = rnd.randint(100, 600)
        yield t, packet(client, server, cport, 443, cseq, sseq, PSH | ACK, 502, req, ts_option(tsc, tss))
        cseq += req
        t += rtt / 2
        segs = rnd.randint(2, 16)
        for k in range(segs):
            t += 0.00012
            yield t, packet(server, client, 443, cport, sseq, cseq, ACK, 509, 1448, ts_option(tss, tsc))
            sseq += 1448
            if k % 2 == 1 or k == segs - 1:
                yield t + rtt / 2, packet(client, server, cport, 443, cseq, sseq, ACK, 502, 0,
                                          ts_option(tsc, tss))
        t += rtt / 2 + rnd.uniform(2.0, 8.0)
        tsc += 1
        tss += 1
    t = min(t, end - rtt)
    yield t, packet(client, server, cport, 443, cseq, sseq, FIN | ACK, 502, 0, ts_option(tsc, tss))
    yield t + rtt / 2, packet(server, client, 443, cport, sseq, cseq + 1, FIN | ACK, 509, 0, ts_option(tss, tsc))
    yield t + rtt, packet(client, server, cport, 443, cseq + 1, sseq + 1, ACK, 502, 0, ts_option(tsc, tss))


def mix(args):
    rnd = random.Random(args.seed)
    w = Writer(args.out)
    server = ip4("10.96.0.1")
    end = T0 + args.duration
    gens = []
    started = 0

    def start(at, short):
        nonlocal started
        started += 1
        c = ip4("10.97.%d.%d" % ((started >> 8) & 0xFF, started & 0xFF))
        port = 1024 + (started >> 16) * 3 + (started % 3)
        rtt = rnd.uniform(0.005, 0.08)
        g = connection(rnd, c, server, port, at, end, rtt, short)
        first = next(g)
        heapq.heappush(gens, (first[0], started, first[1], g, short))

    for i in range(args.flows):
        start(T0 + rnd.uniform(0, 1.0), i % 2 == 0)
    while gens:
        t, k, pkt, g, short = heapq.heappop(gens)
        w.put(t, pkt[0], pkt[1])
        nxt = next(g, None)
        if nxt is None:
            if short and t + 1.0 < end:
                start(t + rnd.uniform(0.0, 0.5), True)  # a short flow is replaced: same concurrency
            continue
        heapq.heappush(gens, (nxt[0], k, nxt[1], g, short))
    w.close()
    print(f"{args.out}: {w.n} packets, {started} connections, {args.flows} concurrent", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    f = sub.add_parser("flood")
    f.add_argument("n", type=int)
    f.add_argument("out")
    f.add_argument("--rate", type=float, default=100_000)
    f.add_argument("--seed", type=int, default=15)
    s = sub.add_parser("scan")
    s.add_argument("out")
    s.add_argument("--ports", type=int, default=65535)
    s.add_argument("--open", default="22,80,443")
    s.add_argument("--seed", type=int, default=15)
    m = sub.add_parser("mix")
    m.add_argument("out")
    m.add_argument("--flows", type=int, required=True)
    m.add_argument("--duration", type=float, default=30.0)
    m.add_argument("--seed", type=int, default=15)
    a = p.parse_args()
    {"flood": flood, "scan": scan, "mix": mix}[a.what](a)


if __name__ == "__main__":
    main()
