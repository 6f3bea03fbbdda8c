"""Scenario tables for netlab.py (edit here to add runs).

Each scenario is a dict:
  name          directory name of the scenario inside a corpus
  kind          scenario family (every parameter set builds the same kinds)
  intended      label the scenario was designed to produce (truth.json's expected_label is DERIVED from
                tcp_info, the intended label is only used by `netlab.py check` to flag surprises)
  duration_s    how long the sender(s) write data (the connection then closes gracefully)
  ipv6          use fd77::1 / fd77::2 instead of 10.77.0.1 / 10.77.0.2
  link          rate_mbit (both directions, Ethernet frame bytes), delay_ms {c2s, s2c} one-way,
                queue_pkts (drop-tail, per direction), loss {c2s, s2c} (fraction, TCP non-SYN only), seed,
                rewrite {strip_wscale|strip_ts|strip_sackok: none|syn|synack|both, mss_clamp: int}
  flows         list of flows (each its own TCP connection, server port 5001+i):
                direction down (server sends) | up (client sends); cc cubic|reno|bbr;
                rcvbuf (SO_RCVBUF on the receiving socket, set before listen/connect),
                sndbuf (SO_SNDBUF on the sending socket); pattern {type: bulk} |
                {type: onoff, burst_bytes, period_s}; recv_pattern {type: fast} | {type: slow, rate_bps}
  capture       start_delay_s (start tcpdump this long after the connection is up -> no handshake),
                nano (nanosecond pcap), pcapng (also write an editcap'd pcapng copy)
"""

import json

K = 1024
M = 1024 * 1024


def _sc(name, kind, intended, rate, rtt_ms, flows, queue=100, loss=0.0, seed=1, rewrite=None, duration=4,
        capture=None, ipv6=False, delay_split=None, description="", shapers=None, hosts=None, outage=None,
        cross=None, jitter=None, reorder=False):
    c2s, s2c = delay_split if delay_split else (rtt_ms / 2.0, rtt_ms / 2.0)
    sc = {
        "name": name, "kind": kind, "intended": intended, "description": description,
        "duration_s": duration, "ipv6": ipv6,
        "link": {"rate_mbit": rate, "delay_ms": {"c2s": c2s, "s2c": s2c}, "queue_pkts": queue,
                 "loss": {"c2s": 0.0, "s2c": loss} if not isinstance(loss, dict) else loss,
                 "seed": seed, "rewrite": rewrite or {}},
        "flows": flows, "capture": capture or {},
    }
    # extensions (netlab.py): rate/queue/jitter may be {c2s, s2c}; jitter_ms: a further uniform(0, jitter)
    # delay per frame after the bottleneck, reorder: frames may overtake; outage {start_s, len_s}; cross {dir: {rate_mbit,
    # pkt_bytes, start_s, on_s, off_s}}; shapers [{dir, qdisc tbf|htb, rate_mbit, burst_bytes, limit_bytes}];
    # hosts {client|server: {sysctl: {...}, initcwnd, initrwnd}}
    if outage:
        sc["link"]["outage"] = outage
    if cross:
        sc["link"]["cross"] = cross
    if jitter:
        sc["link"]["jitter_ms"] = jitter
        sc["link"]["reorder"] = reorder
    if shapers:
        sc["shapers"] = shapers
    if hosts:
        sc["hosts"] = hosts
    return sc


def _f(direction="down", cc="cubic", rcvbuf=None, sndbuf=None, pattern=None, recv_pattern=None, keepalive=None,
       drain_s=None):
    d = {"direction": direction, "cc": cc}
    if drain_s:
        d["drain_s"] = drain_s   # how long the sender waits for the peer's close after its last write
    if keepalive:
        d["keepalive"] = keepalive
    if rcvbuf:
        d["rcvbuf"] = rcvbuf
    if sndbuf:
        d["sndbuf"] = sndbuf
    if pattern:
        d["pattern"] = pattern
    if recv_pattern:
        d["recv_pattern"] = recv_pattern
    return d


def _set(p):
    """Build one corpus from a parameter dict p (parameter sets differ only in p)."""
    R, RTT, Q = p["rate"], p["rtt"], p["queue"]
    S = []
    for rb in p["rcvbufs"]:
        S.append(_sc("rcvbuf_%s" % _h(rb), "rcvbuf_sweep",
                     "receiver-window-limited" if rb * 2 * 0.5 < R * 1e6 / 8 * RTT / 1000 else "bottleneck-limited",
                     R, RTT, [_f(rcvbuf=rb)], queue=Q, duration=5, seed=p["seed"],
                     description="long fat pipe, receiver SO_RCVBUF=%d" % rb))
    S.append(_sc("sndbuf_%s" % _h(p["sndbuf"]), "sndbuf_limited", "sender-limited", R, p["rtt2"],
                 [_f(rcvbuf=4 * M, sndbuf=p["sndbuf"])], queue=Q, seed=p["seed"] + 1,
                 description="small sender SO_SNDBUF, big receiver buffer"))
    S.append(_sc("loss_cubic", "random_loss", "cwnd-limited", R, p["loss_rtt"], [_f(rcvbuf=4 * M)],
                 queue=2 * Q, loss=p["loss_cubic"], seed=p["seed"] + 2,
                 description="random loss %.1f%% on data direction, cubic" % (100 * p["loss_cubic"])))
    S.append(_sc("loss_reno", "random_loss", "cwnd-limited", R, p["loss_rtt2"], [_f(cc="reno", rcvbuf=4 * M)],
                 queue=2 * Q, loss=p["loss_reno"], seed=p["seed"] + 3,
                 description="random loss %.1f%% on data direction, reno" % (100 * p["loss_reno"])))
    S.append(_sc("app_onoff", "app_limited", "sender-limited", R, p["rtt3"],
                 [_f(pattern={"type": "onoff", "burst_bytes": p["burst"], "period_s": p["period"]})],
                 queue=Q, seed=p["seed"] + 4,
                 description="application writes %d B every %.0f ms" % (p["burst"], 1000 * p["period"])))
    S.append(_sc("slow_reader", "slow_reader", "receiver-window-limited", R, p["rtt3"],
                 [_f(rcvbuf=p["slow_rcvbuf"], recv_pattern={"type": "slow", "rate_bps": p["slow_rate"],
                                                             "tick_s": p["slow_tick"]})],
                 queue=Q, seed=p["seed"] + 5,
                 description="receiver app reads only %.1f Mbit/s in %.0f ms ticks -> zero windows" % (
                     p["slow_rate"] / 1e6, 1000 * p["slow_tick"])))
    for mode in ("both", "syn", "synack"):
        # synack-only = mismatch: the client (receiver) believes scaling is off, the server (sender) believes the
        # client scales by its SYN's shift. On kernel 6.18 the download still runs at the link rate (see README).
        S.append(_sc("wscale_strip_%s" % mode, "wscale_stripped",
                     "bottleneck-limited" if mode == "synack" else "receiver-window-limited",
                     p["mb_rate"], p["mb_rtt"], [_f(rcvbuf=4 * M)], queue=Q, seed=p["seed"] + 6,
                     rewrite={"strip_wscale": mode},
                     description="middlebox strips window scale option from %s" % mode))
    S.append(_sc("wscale_strip_synack_up", "wscale_stripped", "receiver-window-limited", p["mb_rate"], p["mb_rtt"],
                 [_f(direction="up", rcvbuf=4 * M)], queue=Q, seed=p["seed"] + 6, rewrite={"strip_wscale": "synack"},
                 description="mismatch, upload: the client (sender) takes the server's scaled windows as unscaled"))
    S.append(_sc("mss_clamp_%d" % p["mss"], "mss_clamped", "bottleneck-limited", R, p["rtt3"], [_f(rcvbuf=4 * M)],
                 queue=Q, seed=p["seed"] + 7, rewrite={"mss_clamp": p["mss"]}, capture={"nano": p["nano_on_mss"]},
                 description="middlebox clamps MSS to %d" % p["mss"]))
    S.append(_sc("ts_stripped", "ts_stripped", "bottleneck-limited", R, p["rtt3"], [_f(rcvbuf=4 * M)],
                 queue=Q, seed=p["seed"] + 8, rewrite={"strip_ts": "both"}, capture={"pcapng": p["pcapng_on_ts"]},
                 description="middlebox strips TCP timestamps from SYN and SYN-ACK"))
    S.append(_sc("sackok_stripped_loss", "sack_stripped", "cwnd-limited", R, p["rtt3"], [_f(rcvbuf=4 * M)],
                 queue=Q, loss=p["loss_sack"], seed=p["seed"] + 9, rewrite={"strip_sackok": "both"},
                 description="SACK-permitted stripped, random loss %.1f%%" % (100 * p["loss_sack"])))
    S.append(_sc("late_capture", "missing_handshake", "receiver-window-limited", R, p["rtt2"],
                 [_f(rcvbuf=p["late_rcvbuf"])], queue=Q, seed=p["seed"] + 10, duration=5,
                 capture={"start_delay_s": p["late_s"], "nano": not p["nano_on_mss"],
                          "pcapng": not p["pcapng_on_ts"]},
                 description="capture starts %.1f s after the handshake (window scale unknown)" % p["late_s"]))
    S.append(_sc("multi_flow_3", "multi_flow", "bottleneck-limited", R, p["rtt"], [_f(rcvbuf=4 * M)] * 3,
                 queue=Q, seed=p["seed"] + 11, duration=5,
                 description="three concurrent cubic flows share the bottleneck"))
    S.append(_sc("bbr_bottleneck", "bbr", "bottleneck-limited", R, p["rtt2"], [_f(cc="bbr", rcvbuf=4 * M)],
                 queue=2 * Q, seed=p["seed"] + 12, duration=5, description="single BBR flow on the bottleneck"))
    S.append(_sc("upload_bulk", "upload", "bottleneck-limited", R, p["rtt3"],
                 [_f(direction="up", rcvbuf=4 * M)], queue=Q, seed=p["seed"] + 13,
                 description="client uploads to the server", delay_split=p["up_split"]))
    S.append(_sc("ipv6_rwnd", "ipv6", "receiver-window-limited", R, p["rtt2"], [_f(rcvbuf=p["v6_rcvbuf"])],
                 queue=Q, seed=p["seed"] + 14, ipv6=True, description="IPv6, small receive buffer"))
    return S


def _h(n):
    if n >= M and n % M == 0:
        return "%dm" % (n // M)
    if n >= M:
        return "%.1fm" % (n / M)
    return "%dk" % (n // K)


SHARED = dict(rate=50, rtt=100, queue=100, rcvbufs=[64 * K, 256 * K, 1 * M, 4 * M], seed=11,
              rtt2=60, rtt3=40, sndbuf=64 * K, loss_rtt=80, loss_cubic=0.01, loss_rtt2=60, loss_reno=0.01,
              burst=200 * K, period=0.3, slow_rcvbuf=64 * K, slow_rate=4e6, slow_tick=0.1, mb_rate=50, mb_rtt=60,
              mss=1200, nano_on_mss=True, pcapng_on_ts=True, loss_sack=0.01, late_rcvbuf=128 * K, late_s=1.0,
              up_split=(20, 20), v6_rcvbuf=128 * K)

# ------------------------------------------------------------------------------------------------------------
# Paths and behaviours the kinds above lack (issue 14, item 5). One parameter dict per corpus ("family": "paths"
# in a JSON file, or `--set paths` for PATHS below). Every kind's expected label is still DERIVED from tcp_info by
# netlab.py's label rules; `intended` is only what the kind was designed to show (check flags a difference).
# ------------------------------------------------------------------------------------------------------------

def _rw(p, extra=None):
    """middlebox rewrite for every kind of a set: an MSS clamp (a VPN/PPPoE path) when the set asks for one"""
    rw = dict(extra or {})
    if p.get("mss_clamp"):
        rw["mss_clamp"] = p["mss_clamp"]
    return rw


def _paths(p):
    S = []
    seed = p["seed"]
    rw = _rw(p)
    big = 8 * M   # the kernel doubles it: room for BDP + queue in flight without tens of MB left unsent
    # 1-3 long fat path (the tutorials' regime): 200-400 ms, BDP of 1-2.5 MB, queue >= BDP
    lf = p["lfp"]
    bdp_pkts = lf["rate"] * 1e6 / 8 * lf["rtt"] / 1000.0 / 1514
    q = max(lf["queue"], int(bdp_pkts) + 1)
    S.append(_sc("lfp_bigbuf", "long_fat_path", "bottleneck-limited", lf["rate"], lf["rtt"],
                 [_f(rcvbuf=big, sndbuf=big, drain_s=10)], queue=q, seed=seed, duration=lf["duration"],
                 rewrite=rw,
                 description="long fat path %g Mbit/s x %g ms (BDP %.1f MB), queue %d pkts >= BDP, 8 MB buffers"
                             % (lf["rate"], lf["rtt"], lf["rate"] * lf["rtt"] / 8000.0, q)))
    S.append(_sc("lfp_defaultbuf", "long_fat_path", lf["default_intended"], lf["rate"], lf["rtt"], [_f(drain_s=10)],
                 queue=q, seed=seed + 1, duration=lf["duration"], rewrite=rw,
                 description="long fat path, no socket options: the kernel's autotuning on both ends "
                             "(tcp_rmem/tcp_wmem as the namespace defaults)"))
    S.append(_sc("lfp_oldrmem", "long_fat_path", "receiver-window-limited", lf["rate"], lf["rtt"],
                 [_f(sndbuf=big, drain_s=10)], queue=q, seed=seed + 2, duration=lf["duration"], rewrite=rw,
                 hosts={"client": {"sysctl": {"net.ipv4.tcp_rmem": lf["old_rmem"]}}},
                 description="long fat path, receiver autotuning capped by tcp_rmem '%s' (a capped default as on "
                             "older, mobile or tuned-down hosts; 6.18's is 32 MiB), sender SO_SNDBUF 8 MB"
                             % lf["old_rmem"]))
    # 4 data in both directions at once
    bd = p["bidir"]
    S.append(_sc("bidir_bulk", "bidirectional", "bottleneck-limited", bd["rate"], bd["rtt"],
                 [_f("down", rcvbuf=4 * M), _f("up", rcvbuf=4 * M)], queue=bd["queue"], seed=seed + 3,
                 duration=5, rewrite=rw,
                 description="a download and an upload at once: each direction's data shares its queue with "
                             "the other flow's ACKs"))
    # 5-8 a bulk flow sharing the bottleneck with other traffic
    cx = p["cross"]
    S.append(_sc("cross_cbr", "cross_traffic", "bottleneck-limited", cx["rate"], cx["rtt"], [_f(rcvbuf=4 * M)],
                 queue=cx["queue"], seed=seed + 4, duration=5, rewrite=rw,
                 cross={"s2c": {"rate_mbit": cx["cbr_mbit"], "pkt_bytes": 1514, "start_s": 0}},
                 description="bulk download + %g Mbit/s constant-rate cross traffic (not in the captures) on "
                             "the %g Mbit/s bottleneck" % (cx["cbr_mbit"], cx["rate"])))
    S.append(_sc("cross_onoff", "cross_traffic", "bottleneck-limited", cx["rate"], cx["rtt"], [_f(rcvbuf=4 * M)],
                 queue=cx["queue"], seed=seed + 5, duration=5, rewrite=rw,
                 cross={"s2c": {"rate_mbit": cx["onoff_mbit"], "pkt_bytes": 1514, "start_s": 0.5,
                                "on_s": cx["on_s"], "off_s": cx["off_s"]}},
                 description="bulk download + on/off cross traffic (%g Mbit/s for %g s every %g s, not in the "
                             "captures)" % (cx["onoff_mbit"], cx["on_s"], cx["on_s"] + cx["off_s"])))
    S.append(_sc("cross_tcp_onoff", "cross_traffic", "bottleneck-limited", cx["rate"], cx["rtt"],
                 [_f(rcvbuf=4 * M), _f(rcvbuf=4 * M, pattern={"type": "onoff", "burst_bytes": cx["tcp_burst"],
                                                             "period_s": cx["tcp_period"]})],
                 queue=cx["queue"], seed=seed + 6, duration=5, rewrite=rw,
                 description="bulk download + a second TCP connection writing %d B every %.0f ms (both captured)"
                             % (cx["tcp_burst"], 1000 * cx["tcp_period"])))
    S.append(_sc("late_join", "cross_traffic", "bottleneck-limited", cx["rate"], cx["rtt"],
                 [_f(rcvbuf=4 * M), _f(rcvbuf=4 * M, pattern={"type": "bulk", "start_s": cx["join_s"]})],
                 queue=cx["queue"], seed=seed + 7, duration=6, rewrite=rw,
                 description="bulk download; a second bulk connection starts %.1f s later and takes a share"
                             % cx["join_s"]))
    # 9-11 kernel token buckets after the delay line (tbf / htb), the delay line itself faster
    def token_bucket(name, intended, t, qdisc, seed_off, description):
        return _sc(name, "token_bucket", intended, t["line"], t["rtt"], [_f(rcvbuf=4 * M)], queue=200,
                   seed=seed + seed_off, duration=5, rewrite=rw,
                   shapers=[{"dir": "s2c", "qdisc": qdisc, "rate_mbit": t["rate"], "burst_bytes": t["burst"],
                             "limit_bytes": t["limit"]}], description=description)
    tb, hb, po = p["tbf"], p["htb"], p["policer"]
    S.append(token_bucket("tbf_shaper", "bottleneck-limited", tb, "tbf", 8,
                          "tbf shaper %g Mbit/s burst %d B queue %d B behind a %g Mbit/s delay line"
                          % (tb["rate"], tb["burst"], tb["limit"], tb["line"])))
    S.append(token_bucket("htb_shaper", "bottleneck-limited", hb, "htb", 9,
                          "htb class rate=ceil %g Mbit/s burst %d B, bfifo %d B, behind a %g Mbit/s delay line"
                          % (hb["rate"], hb["burst"], hb["limit"], hb["line"])))
    S.append(token_bucket("tbf_policer", po["intended"], po, "tbf", 10,
                          "policer: tbf %g Mbit/s burst %d B with a %d B queue: what does not fit is dropped"
                          % (po["rate"], po["burst"], po["limit"])))
    # 12 a consumer uplink with a bloated queue: the RTT inflates ~10x
    bl = p["bloat"]
    qdelay = bl["rtt"] * (bl["inflate"] - 1) / 1000.0
    qup = int(qdelay * bl["up"] * 1e6 / 8 / 1514)
    S.append(_sc("bufferbloat_up", "bufferbloat", "bottleneck-limited", {"c2s": bl["up"], "s2c": bl["down"]},
                 bl["rtt"], [_f("up", rcvbuf=4 * M)], queue={"c2s": qup, "s2c": 100}, seed=seed + 11,
                 duration=6, rewrite=rw,
                 description="upload on an asymmetric %g/%g Mbit/s access link, uplink queue %d pkts = %.0f ms "
                             "(RTT %g ms base, up to ~%gx)" % (bl["up"], bl["down"], qup, 1000 * qdelay, bl["rtt"],
                                                              bl["inflate"])))
    # 13 small initial window (RFC 3390-era IW) on a longish path: slow start takes log2(BDP/IW) RTTs
    iw = p["small_iw"]
    S.append(_sc("small_iw", "small_initial_window", "bottleneck-limited", iw["rate"], iw["rtt"],
                 [_f(rcvbuf=4 * M)], queue=iw["queue"], seed=seed + 12, duration=5, rewrite=rw,
                 hosts={"server": {"initcwnd": iw["initcwnd"]}},
                 description="sender route initcwnd %d (instead of 10)" % iw["initcwnd"]))
    # 14 write-write-read with Nagle on, against a server that answers only whole requests: delayed ACKs
    nd = p["nagle"]
    S.append(_sc("nagle_delack", "delayed_ack", "sender-limited", nd["rate"], nd["rtt"],
                 [_f("up", pattern={"type": "rr", "size": nd["size"], "split_bytes": nd["split"], "nodelay": False,
                                    "count": 1000, "gap_s": nd["gap"]},
                     recv_pattern={"type": "echo_msg", "size": nd["size"]})],
                 seed=seed + 13, duration=4, rewrite=rw,
                 description="requests of %d B written as %d + %d B with Nagle on; the server replies to whole "
                             "requests only, so the second write waits for a delayed ACK" % (
                                 nd["size"], nd["split"], nd["size"] - nd["split"])))
    # 15 receiver application that reads in bursts
    br = p["bursty"]
    S.append(_sc("bursty_reader", "bursty_reader", "receiver-window-limited", br["rate"], br["rtt"],
                 [_f(rcvbuf=br["rcvbuf"], recv_pattern={"type": "bursty", "period_s": br["period"]})],
                 seed=seed + 14, duration=5, rewrite=rw,
                 description="receiver drains its %d B buffer once every %.0f ms -> zero windows, then reopens"
                             % (br["rcvbuf"], 1000 * br["period"])))
    # 16 long idle (> RTO) then resume: cwnd restart after idle (RFC 5681 4.1, RFC 7661)
    ir = p["idle"]
    S.append(_sc("idle_resume", "idle_resume", "sender-limited", ir["rate"], ir["rtt"],
                 [_f(rcvbuf=4 * M, pattern={"type": "idle_resume", "on_s": ir["on"], "idle_s": ir["idle"]})],
                 queue=ir["queue"], seed=seed + 15, duration=ir["on"] + ir["idle"] + ir["after"], rewrite=rw,
                 description="bulk %.1f s, application idle %.1f s, bulk %.1f s" % (ir["on"], ir["idle"], ir["after"])))
    # 17 outage: the path drops everything for len_s seconds; RTO back-off, then resume
    og = p["outage"]
    S.append(_sc("outage", "outage", "bottleneck-limited", og["rate"], og["rtt"], [_f(rcvbuf=4 * M)],
                 queue=og["queue"], seed=seed + 16, duration=og["duration"], rewrite=rw,
                 outage={"start_s": og["start"], "len_s": og["len"]},
                 description="bulk download; the path delivers nothing from %.1f s to %.1f s after the SYN"
                             % (og["start"], og["start"] + og["len"])))
    # 18 zero window that never reopens: the receiving application stops reading
    zw = p["zerowin"]
    S.append(_sc("zero_window_stuck", "zero_window_stall", "receiver-window-limited", zw["rate"], zw["rtt"],
                 [_f(rcvbuf=zw["rcvbuf"], recv_pattern={"type": "stop", "after_bytes": zw["after"]})],
                 seed=seed + 17, duration=4, rewrite=rw,
                 description="receiver reads %d B then never again (SO_RCVBUF %d): zero window, persist probes, "
                             "the sender gives up with a RST" % (zw["after"], zw["rcvbuf"])))
    # 19 keep-alive only: a greeting, then nothing but keep-alive probes
    ka = p["keepalive"]
    S.append(_sc("keepalive_only", "keepalive_only", "sender-limited", ka["rate"], ka["rtt"],
                 [_f(pattern={"type": "idle", "greeting_bytes": ka["greeting"]},
                     keepalive={"side": "client", "idle_s": ka["idle"], "intvl_s": ka["intvl"], "cnt": 9})],
                 seed=seed + 18, duration=ka["duration"], rewrite=rw,
                 description="server writes a %d B greeting, then the connection idles; the client sends "
                             "keep-alives after %d s idle every %d s" % (ka["greeting"], ka["idle"], ka["intvl"])))
    # 20 LAN: sub-millisecond RTT (every number must keep its digits)
    ln = p["lan"]
    S.append(_sc("lan_fast", "lan", "bottleneck-limited", ln["rate"], ln["rtt"], [_f(rcvbuf=4 * M)],
                 queue=ln["queue"], seed=seed + 19, duration=3, rewrite=rw,
                 description="LAN-like path: %g Mbit/s, RTT %g ms" % (ln["rate"], ln["rtt"])))
    # 21 ACK loss on the reverse path (radio uplinks): cumulative ACKs cover for lost ones
    al = p["ackloss"]
    S.append(_sc("ack_loss", "ack_loss", "bottleneck-limited", al["rate"], al["rtt"], [_f(rcvbuf=4 * M)],
                 queue=al["queue"], loss={"c2s": al["loss"], "s2c": 0.0}, seed=seed + 20, duration=5, rewrite=rw,
                 description="bulk download, %.0f%% random loss of the ACKs (client->server)" % (100 * al["loss"])))
    # 22-24 (parameter sets with "jitter"): delay variation after the bottleneck, with and without reordering
    jt = p.get("jitter")
    if jt:
        def jittered(name, kind, intended, flow, seed_off, jitter, reorder, description):
            return _sc(name, kind, intended, jt["rate"], jt["rtt"], [flow], queue=jt["queue"], seed=seed + seed_off,
                       duration=5, rewrite=rw, jitter=jitter, reorder=reorder, description=description)
        S.append(jittered("jitter_reorder", "reordering", "bottleneck-limited", _f(rcvbuf=4 * M), 21, jt["jitter"], True,
                          "bulk download; every frame (both directions) waits a further 0-%g ms after the bottleneck "
                          "and may overtake the ones before it (parallel links, radio retries)" % jt["jitter"]))
        S.append(jittered("jitter_fifo", "delay_variation", "bottleneck-limited", _f(rcvbuf=4 * M), 22,
                          jt["fifo_jitter"], False,
                          "bulk download; every frame waits a further 0-%g ms after the bottleneck, in order (a radio "
                          "hop's aggregation and retries): the ACK clock is jittered" % jt["fifo_jitter"]))
        S.append(jittered("reorder_rwnd", "reordering", "receiver-window-limited", _f(rcvbuf=jt["rcvbuf"]), 23,
                          jt["jitter"], True,
                          "SO_RCVBUF %d B on a reordering path (0-%g ms per frame, overtaking allowed)"
                          % (jt["rcvbuf"], jt["jitter"])))
    return S


PATHS = dict(
    family="paths", seed=201, mss_clamp=None,
    lfp=dict(rate=40, rtt=300, queue=1000, duration=10, old_rmem="4096 131072 1048576",
             default_intended="bottleneck-limited"),
    bidir=dict(rate=40, rtt=50, queue=100),
    cross=dict(rate=40, rtt=50, queue=200, cbr_mbit=16, onoff_mbit=12, on_s=1.0, off_s=1.0, tcp_burst=150 * K,
               tcp_period=0.25, join_s=2.0),
    tbf=dict(line=100, rate=30, burst=30000, limit=150000, rtt=50),
    htb=dict(line=100, rate=25, burst=15000, limit=120000, rtt=70),
    policer=dict(line=100, rate=20, burst=15000, limit=3028, rtt=50, intended="cwnd-limited"),
    bloat=dict(up=8, down=50, rtt=30, inflate=10),
    small_iw=dict(rate=30, rtt=150, queue=200, initcwnd=2),
    nagle=dict(rate=50, rtt=30, size=1200, split=100, gap=0.01),
    bursty=dict(rate=40, rtt=40, rcvbuf=128 * K, period=0.3),
    idle=dict(rate=40, rtt=50, queue=100, on=1.5, idle=2.5, after=1.5),
    outage=dict(rate=40, rtt=40, queue=100, start=2.0, len=1.5, duration=7),
    zerowin=dict(rate=40, rtt=40, rcvbuf=96 * K, after=400 * K),
    keepalive=dict(rate=40, rtt=40, greeting=120, idle=1, intvl=1, duration=5),
    lan=dict(rate=100, rtt=0.4, queue=100),
    ackloss=dict(rate=40, rtt=50, queue=100, loss=0.05),
)


def _with_stack(S, p):
    """a set-wide stack (p["hosts"]: {client|server: {sysctl: {...}}}) on every scenario: the same kinds run by
    other TCP stacks' defaults -- timestamps off (Windows' default, RFC 7323 optional), SACK off (pre-RFC 2018
    stacks), window scaling off (pre-RFC 1323 stacks) -- merged under a scenario's own host settings"""
    stack = p.get("hosts")
    if not stack:
        return S
    for sc in S:
        own = sc.get("hosts") or {}
        merged = {}
        for role in ("client", "server"):
            h = dict(stack.get(role) or {})
            o = own.get(role) or {}
            sysctl = dict(h.get("sysctl") or {})
            sysctl.update(o.get("sysctl") or {})
            h.update(o)
            if sysctl:
                h["sysctl"] = sysctl
            if h:
                merged[role] = h
        sc["hosts"] = merged
        sc["description"] = (sc.get("description") or "") + "; stack: %s" % p.get("stack_name", "custom")
    return S


def get_set(which):
    """`shared`, `paths`, or the path of a JSON file holding a parameter dict with the keys of SHARED (or, with
    "family": "paths", the keys of PATHS)."""
    if which == "shared":
        return _set(SHARED)
    if which == "paths":
        return _paths(PATHS)
    if which.endswith(".json"):
        with open(which) as fh:
            p = json.load(fh)
        if p.get("family") == "paths":
            return _with_stack(_paths(p), p)
        p["up_split"] = tuple(p["up_split"])
        return _with_stack(_set(p), p)
    raise KeyError(which)
