/* bdpscope report: the flow table (sort, filter, query string) and each flow's four
   graphs, drawn with uPlot. The graphs of a flow share their time axis: dragging across
   one zooms all four, a double-click zooms out, and each shows the values under the
   cursor. Every series is thinned to the pixels it covers: over the whole flow about two
   points per pixel column (the lowest and the highest), more as the axis is zoomed, down
   to every point the report holds. */
(function(){
  "use strict";
  var root = document.documentElement;
  window.addEventListener("error", function(e){ root.setAttribute("data-js-error", String(e.message)); });

  /* ---- Quantities, written as bdpscope::units writes them (the report test checks
     these against the Rust functions). ---- */
  function sig3(v){
    if (!isFinite(v)) { return String(v); }
    if (v === 0) { return "0"; }
    var a = Math.abs(v), d = Math.max(0, 2 - Math.floor(Math.log10(a)));
    function r(k){ return Math.round(a * Math.pow(10, k)) / Math.pow(10, k); }
    if (d > 0 && r(d) >= Math.pow(10, 3 - d)) { d -= 1; }
    return v.toFixed(Math.min(d, 15));
  }
  function bytes(b){
    var K = 1024;
    if (b >= K * K * K) { return sig3(b / (K * K * K)) + " GiB"; }
    if (b >= K * K) { return sig3(b / (K * K)) + " MiB"; }
    if (b >= K) { return sig3(b / K) + " KiB"; }
    return (b === Math.trunc(b) ? b.toFixed(0) : sig3(b)) + " B";
  }
  function bits(bps){
    if (bps >= 1e9) { return sig3(bps / 1e9) + " Gbit/s"; }
    if (bps >= 1e6) { return sig3(bps / 1e6) + " Mbit/s"; }
    if (bps >= 1e3) { return sig3(bps / 1e3) + " kbit/s"; }
    return sig3(bps) + " bit/s";
  }
  function secs(s){
    var a = Math.abs(s);
    if (a === 0) { return "0 s"; }
    if (a >= 1) { return sig3(s) + " s"; }
    if (a >= 1e-3) { return sig3(s * 1e3) + " ms"; }
    if (a >= 1e-6) { return sig3(s * 1e6) + " \u00b5s"; }
    return sig3(s * 1e9) + " ns";
  }
  function ms(s){
    if (Math.abs(s) >= 1e-3) { var m = s * 1e3; return Math.abs(m) >= 1000 ? m.toFixed(0) + " ms" : sig3(m) + " ms"; }
    return secs(s);
  }
  window.bdpscopeUnits = {bytes: bytes, bits: bits, ms: ms};

  /* ---- The flow table. ---- */
  function table(){
    var t = document.getElementById("flow-table");
    if (!t) { return; }
    var tbody = t.tBodies[0];
    var heads = Array.prototype.slice.call(t.tHead.rows[0].cells);
    var boxes = Array.prototype.slice.call(document.querySelectorAll(".filters input[data-verdict]"));
    function value(row, i, num){
      var v = row.cells[i].getAttribute("data-v");
      if (num) { var x = parseFloat(v); return isNaN(x) ? -Infinity : x; }
      return v || "";
    }
    function sortBy(i, dir){
      var num = heads[i].getAttribute("data-type") === "num";
      var rows = Array.prototype.slice.call(tbody.rows);
      rows.sort(function(a, b){
        var x = value(a, i, num), y = value(b, i, num);
        var c = num ? (x - y) : String(x).localeCompare(String(y), undefined, {numeric: true});
        if (c === 0) { c = value(a, 0, true) - value(b, 0, true); }
        return dir === "descending" ? -c : c;
      });
      rows.forEach(function(r){ tbody.appendChild(r); });
      heads.forEach(function(h, j){ h.setAttribute("aria-sort", j === i ? dir : "none"); });
    }
    heads.forEach(function(h, i){
      function go(){ sortBy(i, h.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending"); }
      h.addEventListener("click", go);
      h.addEventListener("keydown", function(e){ if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
    });
    function applyFilter(){
      var on = {};
      boxes.forEach(function(b){ on[b.getAttribute("data-verdict")] = b.checked; });
      var shown = 0, total = 0;
      Array.prototype.forEach.call(tbody.rows, function(r){
        var keep = on[r.getAttribute("data-verdict")] !== false;
        r.classList.toggle("hidden", !keep); total++; if (keep) { shown++; }
      });
      Array.prototype.forEach.call(document.querySelectorAll("section.flow"), function(s){
        s.classList.toggle("hidden", on[s.getAttribute("data-verdict")] === false);
      });
      var el = document.getElementById("shown");
      if (el) { el.textContent = shown === total ? "" : shown + " of " + total + " flows shown"; }
    }
    boxes.forEach(function(b){ b.addEventListener("change", applyFilter); });
    // ?sort=KEY&dir=asc|desc&verdict=a,b opens the page sorted and filtered.
    var q = new URLSearchParams(window.location.search);
    if (q.get("verdict")) {
      var want = q.get("verdict").split(",");
      boxes.forEach(function(b){ b.checked = want.indexOf(b.getAttribute("data-verdict")) >= 0; });
    }
    applyFilter();
    if (q.get("sort")) {
      heads.forEach(function(h, i){
        if (h.getAttribute("data-key") === q.get("sort")) { sortBy(i, q.get("dir") === "desc" ? "descending" : "ascending"); }
      });
    }
  }

  /* ---- Series as the report sends them (see src/render/charts.rs). ---- */
  function decode(s){
    if (!s) { return null; }
    var n = s.t.length, t = new Float64Array(n), acc = 0;
    for (var i = 0; i < n; i++) { acc += s.t[i]; t[i] = acc / 1e6; }
    return {t: t, v: s.v, lo: s.lo, hi: s.hi, w: s.w ? s.w / 1e6 : 0};
  }
  function both(a, b){
    if (!a) { return b; }
    if (!b) { return a; }
    var idx = [], i;
    for (i = 0; i < a.t.length; i++) { idx.push([a.t[i], a.v[i]]); }
    for (i = 0; i < b.t.length; i++) { idx.push([b.t[i], b.v[i]]); }
    idx.sort(function(x, y){ return x[0] - y[0]; });
    return {t: Float64Array.from(idx.map(function(p){ return p[0]; })), v: idx.map(function(p){ return p[1]; })};
  }
  /* First index with t >= x. */
  function lower(t, x){
    var lo = 0, hi = t.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (t[m] < x) { lo = m + 1; } else { hi = m; } }
    return lo;
  }
  /* The indexes of the points between x0 and x1 (one more each side, so lines reach the
     edges), thinned to the first, lowest, highest and last point of each pixel column
     when there are more than two per column. */
  function visible(s, x0, x1, px, key){
    var i0 = Math.max(0, lower(s.t, x0) - 1), i1 = Math.min(s.t.length, lower(s.t, x1) + 1);
    var out = [];
    if (i1 - i0 <= 2 * px) { for (var i = i0; i < i1; i++) { out.push(i); } return out; }
    var val = s[key || "v"], span = (x1 - x0) / px, col = -1, f = 0, lo = 0, hi = 0, last = 0;
    function flush(){ var c = [f, lo, hi, last].sort(function(a, b){ return a - b; }); c.forEach(function(k, j){ if (j === 0 || k !== c[j - 1]) { out.push(k); } }); }
    for (var k = i0; k < i1; k++) {
      var c = Math.floor((s.t[k] - x0) / span);
      if (c !== col) { if (col >= 0) { flush(); } col = c; f = lo = hi = last = k; continue; }
      if (val[k] < val[lo]) { lo = k; }
      if (val[k] > val[hi]) { hi = k; }
      last = k;
    }
    if (col >= 0) { flush(); }
    return out;
  }
  /* The last point at or before x. */
  function at(s, x){
    if (!s || !s.t.length) { return -1; }
    var i = lower(s.t, x);
    if (i < s.t.length && s.t[i] === x) { return i; }
    return i - 1;
  }
  function maxIn(s, x0, x1, key){
    var m = 0; if (!s) { return m; }
    var v = s[key || "v"], i0 = Math.max(0, lower(s.t, x0) - 1), i1 = Math.min(s.t.length, lower(s.t, x1) + 1);
    for (var i = i0; i < i1; i++) { if (v[i] > m) { m = v[i]; } }
    return m;
  }
  function minIn(s, x0, x1, key){
    var m = Infinity; if (!s) { return m; }
    var v = s[key || "v"], i0 = lower(s.t, x0), i1 = lower(s.t, x1);
    for (var i = i0; i < i1; i++) { if (v[i] < m) { m = v[i]; } }
    return m;
  }
  /* Sums per interval (goodput): the report's buckets merged into intervals of `iv`
     seconds aligned to the flow's start, empty intervals included, a stub at the end of
     the flow shorter than a quarter interval joined to the one before. */
  function rates(s, x0, x1, iv, xmax){
    if (!s || !s.t.length) { return []; }
    var k = Math.max(1, Math.ceil(iv / s.w - 1e-9)), w = s.w * k, out = [];
    var j0 = Math.max(0, Math.floor(x0 / w) - 1), j1 = Math.ceil(x1 / w) + 1;
    var i = lower(s.t, j0 * w - 1e-9);
    for (var j = j0; j <= j1; j++) {
      var a = j * w, b = Math.min(a + w, xmax), sum = 0;
      if (a >= xmax) { break; }
      while (i < s.t.length && s.t[i] < a + w - 1e-9) { if (s.t[i] >= a - 1e-9) { sum += s.v[i]; } i++; }
      if (b - a < 0.25 * w && out.length && out[out.length - 1].b >= a - 1e-9) {
        var l = out[out.length - 1]; l.sum += sum; l.b = b;
      } else if (b > a) { out.push({a: a, b: b, sum: sum}); }
    }
    out.forEach(function(r){ r.rate = r.sum * 8 / (r.b - r.a); });
    return out;
  }

  var css = getComputedStyle(root);
  function col(name){ return css.getPropertyValue("--" + name).trim() || "#000"; }

  /* ---- One flow's graphs. ---- */
  function flowGraphs(section){
    var el = section.querySelector("script.flow-data");
    if (!el) { return; }
    var d = JSON.parse(el.textContent);
    var S = {};
    Object.keys(d.series).forEach(function(k){ S[k] = decode(d.series[k]); });
    S.rtt_data = both(S.rtt_data, S.rtt_data2);
    S.rtt_ts = both(S.rtt_ts, S.rtt_ts2);
    S.rtt_hs = both(S.rtt_hs, S.rtt_hs2);
    var pr = uPlot.pxRatio || 1;
    var plots = [], syncing = false, key = section.id;

    /* Drawing helpers, in canvas pixels. */
    function X(u, v){ return u.valToPos(v, "x", true); }
    function Y(u, v){ return u.valToPos(v, "y", true); }
    function stroke(ctx, colour, width, dash){ ctx.strokeStyle = colour; ctx.lineWidth = width * pr; ctx.setLineDash(dash ? [6 * pr, 4 * pr] : []); }
    function line(u, s, colour, width, opts){
      if (!s) { return; }
      opts = opts || {};
      var ctx = u.ctx, idx = visible(s, u.scales.x.min, u.scales.x.max, u.bbox.width / pr);
      stroke(ctx, colour, width, false);
      ctx.beginPath();
      var started = false, px = 0, py = 0, pt = 0;
      idx.forEach(function(i){
        var x = X(u, s.t[i]), y = Y(u, s.v[i]);
        if (!started || (opts.gap && s.t[i] - pt > opts.gap)) { ctx.moveTo(x, y); started = true; }
        else if (opts.step) { ctx.lineTo(x, py); ctx.lineTo(x, y); }
        else { ctx.lineTo(x, y); }
        px = x; py = y; pt = s.t[i];
      });
      if (opts.step && started && opts.until !== undefined) { ctx.lineTo(X(u, opts.until), py); }
      ctx.stroke();
    }
    function hline(u, v, colour, width){
      if (v === null || v === undefined) { return; }
      var ctx = u.ctx, y = Y(u, Math.min(v, u.scales.y.max));
      stroke(ctx, colour, width, true);
      ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
      ctx.setLineDash([]);
    }
    /* Vertical bars from lo to hi: where several fall in one pixel column, one bar from
       the lowest to the highest of them (what a column can show). */
    function bars(u, s, colour, width, cross){
      if (!s) { return; }
      var ctx = u.ctx, x0 = u.scales.x.min, x1 = u.scales.x.max, px = u.bbox.width / pr, span = (x1 - x0) / px;
      var i0 = Math.max(0, lower(s.t, x0) - 1), i1 = Math.min(s.t.length, lower(s.t, x1) + 1), cols = [];
      for (var i = i0; i < i1; i++) {
        var c = Math.floor((s.t[i] - x0) / span), last = cols[cols.length - 1];
        if (last && last.c === c) { last.lo = Math.min(last.lo, s.lo[i]); last.hi = Math.max(last.hi, s.hi[i]); }
        else { cols.push({c: c, t: s.t[i], lo: s.lo[i], hi: s.hi[i]}); }
      }
      stroke(ctx, colour, width, false);
      ctx.beginPath();
      cols.forEach(function(b){
        var x = X(u, b.t), y0 = Y(u, b.lo), y1 = Y(u, b.hi);
        if (Math.abs(y0 - y1) < 2 * pr) { y1 = y0 - 2 * pr; }
        ctx.moveTo(x, y0); ctx.lineTo(x, y1);
        if (cross) { var m = (y0 + y1) / 2, r = 5 * pr; ctx.moveTo(x - r, m - r); ctx.lineTo(x + r, m + r); ctx.moveTo(x - r, m + r); ctx.lineTo(x + r, m - r); }
      });
      ctx.stroke();
    }
    function dots(u, s, colour, r, floor){
      if (!s) { return; }
      var ctx = u.ctx, idx = visible(s, u.scales.x.min, u.scales.x.max, u.bbox.width / pr);
      ctx.fillStyle = colour; ctx.globalAlpha = 0.55;
      idx.forEach(function(i){
        var v = Math.min(Math.max(s.v[i], floor), u.scales.y.max);
        ctx.beginPath(); ctx.arc(X(u, s.t[i]), Y(u, v), r * pr, 0, 2 * Math.PI); ctx.fill();
      });
      ctx.globalAlpha = 1;
    }
    function clip(u, f){
      var ctx = u.ctx; ctx.save();
      ctx.beginPath(); ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height); ctx.clip();
      f(ctx); ctx.restore();
    }
    function head(v){ return v * 1.08; }

    var gap = d.gap_s;
    var kinds = {
      flight: {
        label: "bytes", fmt: bytes,
        yrange: function(x0, x1){
          var near = Math.max(maxIn(S.sflight, x0, x1), maxIn(S.flight, x0, x1), maxIn(S.pipe, x0, x1), d.bdp || 0);
          var rw = maxIn(S.rwnd, x0, x1);
          var top = near > 0 && rw > 1.6 * near ? 1.25 * near : Math.max(near, rw);
          return [0, head(top) || 1];
        },
        draw: function(u){
          clip(u, function(ctx){
            (d.bands || []).forEach(function(b){
              var a = X(u, b[0]), e = X(u, b[1]);
              ctx.fillStyle = col(b[2]); ctx.fillRect(a, u.bbox.top, Math.max(e - a, pr), u.bbox.height);
            });
            line(u, S.rwnd, col("c-orange"), 4, {step: true, until: d.x_max});
            if (S.sflight) { line(u, S.flight, col("c-lightblue"), 1); }
            line(u, S.pipe, col("c-green"), 1, {gap: gap});
            if (S.sflight) { line(u, S.sflight, col("c-blue"), 2, {gap: gap}); } else { line(u, S.flight, col("c-blue"), 2); }
            if (d.bdp) { hline(u, d.bdp, col("c-ink"), 2); }
            if (S.rex) {
              var idx = visible(S.rex, u.scales.x.min, u.scales.x.max, u.bbox.width / pr, "hi"), y0 = Y(u, 0), y1 = y0 - 0.045 * u.bbox.height;
              stroke(ctx, col("c-red"), 2, false); ctx.beginPath();
              idx.forEach(function(i){ var x = X(u, S.rex.t[i]); ctx.moveTo(x, y0); ctx.lineTo(x, y1); });
              ctx.stroke();
            }
          });
        },
        tip: function(t){
          var o = [];
          var i = at(S.sflight, t); if (i >= 0) { o.push(["flight (sender's view)", bytes(S.sflight.v[i])]); }
          i = at(S.flight, t); if (i >= 0) { o.push(["flight at the capture point", bytes(S.flight.v[i])]); }
          i = at(S.rwnd, t); if (i >= 0) { o.push(["receive window", bytes(S.rwnd.v[i])]); }
          i = at(S.pipe, t); if (i >= 0) { o.push(["pipe", bytes(S.pipe.v[i])]); }
          if (d.bdp) { o.push(["BDP", bytes(d.bdp)]); }
          (d.bands || []).forEach(function(b){ if (t >= b[0] && t < b[1]) { o.push(["period", b[2]]); } });
          return o;
        }
      },
      rtt: {
        label: "RTT", fmt: function(v){ return ms(v / 1000); },
        yrange: function(x0, x1){
          var base = d.base_rtt_ms, floor = base ? base * 0.5 : 0, lo = Infinity, hi = 0;
          [S.rtt_data, S.rtt_ts, S.rtt_hs, S.srtt].forEach(function(s){
            if (!s) { return; }
            var i0 = lower(s.t, x0), i1 = lower(s.t, x1);
            for (var i = i0; i < i1; i++) { var v = s.v[i]; if (v >= floor) { if (v < lo) { lo = v; } if (v > hi) { hi = v; } } }
          });
          if (!isFinite(lo)) { lo = 0; hi = base || 1; }
          if (base) { lo = Math.min(lo, base); hi = Math.max(hi, base); }
          var spread = hi - lo, ymin = lo > 0 && spread < 0.5 * lo ? Math.max(lo - Math.max(spread, lo * 0.02) * 0.35, 0) : 0;
          return [ymin, ymin + Math.max(hi - ymin, 0.5) * 1.08];
        },
        draw: function(u){
          clip(u, function(ctx){
            var base = d.base_rtt_ms, ymin = u.scales.y.min;
            if (base && S.srtt) {
              var s = S.srtt, idx = visible(s, u.scales.x.min, u.scales.x.max, u.bbox.width / pr), yb = Y(u, base);
              ctx.fillStyle = col("c-queue"); ctx.beginPath();
              if (idx.length) { ctx.moveTo(X(u, s.t[idx[0]]), yb); }
              idx.forEach(function(i){ ctx.lineTo(X(u, s.t[i]), Y(u, Math.max(s.v[i], base))); });
              if (idx.length) { ctx.lineTo(X(u, s.t[idx[idx.length - 1]]), yb); }
              ctx.closePath(); ctx.fill();
            }
            var r = (S.rtt_data && S.rtt_data.t.length > 1500) ? 2 : 3;
            dots(u, S.rtt_data, col("c-blue"), r, ymin);
            dots(u, S.rtt_ts, col("c-orange"), r, ymin);
            dots(u, S.rtt_hs, col("c-ink"), 3, ymin);
            line(u, S.srtt, col("c-red"), 2);
            if (base) { hline(u, base, col("c-ink"), 2); }
          });
        },
        tip: function(t){
          var o = [], i = at(S.srtt, t);
          if (i >= 0) { o.push(["smoothed RTT", ms(S.srtt.v[i] / 1000)]); }
          i = at(S.rtt_data, t); if (i >= 0) { o.push(["data/ACK sample", ms(S.rtt_data.v[i] / 1000) + " at " + S.rtt_data.t[i].toFixed(3) + " s"]); }
          i = at(S.rtt_ts, t); if (i >= 0) { o.push(["timestamp-echo sample", ms(S.rtt_ts.v[i] / 1000) + " at " + S.rtt_ts.t[i].toFixed(3) + " s"]); }
          if (d.base_rtt_ms) { o.push(["base RTT", ms(d.base_rtt_ms / 1000)]); }
          return o;
        }
      },
      throughput: {
        label: "rate", fmt: bits,
        interval: function(x0, x1){ return Math.max((x1 - x0) / 150, (d.base_rtt_ms || 0) / 1000, 0.001); },
        yrange: function(x0, x1){
          var iv = this.interval(x0, x1), m = d.bottleneck_bps || 0;
          rates(S.delivered, x0, x1, iv, d.x_max).concat(rates(S.sent, x0, x1, iv, d.x_max)).forEach(function(r){ if (r.rate > m) { m = r.rate; } });
          return [0, head(m) || 1];
        },
        draw: function(u){
          var self = this;
          clip(u, function(ctx){
            var x0 = u.scales.x.min, x1 = u.scales.x.max, iv = self.interval(x0, x1);
            function stairs(rs, colour, width, fill){
              if (!rs.length) { return; }
              ctx.beginPath();
              rs.forEach(function(r, j){
                var a = X(u, r.a), b = X(u, r.b), y = Y(u, r.rate);
                if (j === 0) { ctx.moveTo(a, fill ? Y(u, 0) : y); if (fill) { ctx.lineTo(a, y); } } else { ctx.lineTo(a, y); }
                ctx.lineTo(b, y);
              });
              if (fill) { ctx.lineTo(X(u, rs[rs.length - 1].b), Y(u, 0)); ctx.closePath(); ctx.fillStyle = colour; ctx.globalAlpha = 0.25; ctx.fill(); ctx.globalAlpha = 1; }
              else { stroke(ctx, colour, width, false); ctx.stroke(); }
            }
            var good = rates(S.delivered, x0, x1, iv, d.x_max);
            stairs(good, col("c-lightblue"), 0, true);
            stairs(rates(S.sent, x0, x1, iv, d.x_max), col("c-grey"), 1, false);
            stairs(good, col("c-blue"), 2, false);
            if (d.bottleneck_bps) { hline(u, d.bottleneck_bps, col("c-red"), 2); }
            if (d.goodput_bps > 0) { hline(u, d.goodput_bps, col("c-blue"), 1); }
          });
        },
        tip: function(t, u){
          var iv = this.interval(u.scales.x.min, u.scales.x.max), o = [];
          var g = rates(S.delivered, t - iv, t + iv, iv, d.x_max).filter(function(r){ return t >= r.a && t < r.b; })[0];
          if (g) { o.push(["goodput", bits(g.rate) + " over " + g.a.toFixed(3) + "–" + g.b.toFixed(3) + " s"]); }
          var s = rates(S.sent, t - iv, t + iv, iv, d.x_max).filter(function(r){ return t >= r.a && t < r.b; })[0];
          if (s) { o.push(["new data seen", bits(s.rate)]); }
          if (d.bottleneck_bps) { o.push(["bottleneck", bits(d.bottleneck_bps)]); }
          return o;
        }
      },
      timeseq: {
        label: "relative sequence", fmt: bytes,
        yrange: function(x0, x1){
          var top = Math.max(maxIn(S.seg, x0, x1, "hi"), maxIn(S.ack, x0, x1), maxIn(S.sack, x0, x1, "hi"));
          var bot = Math.min(minIn(S.seg, x0, x1, "lo"), minIn(S.ack, x0, x1));
          if (!isFinite(bot) || x0 <= 0) { bot = 0; }
          var edge = maxIn(S.edge, x0, x1), span = Math.max(top - bot, 1);
          if (edge > top && edge - bot <= 1.3 * span) { top = edge; } else if (edge > top) { top = top + 0.15 * span; }
          return [Math.max(0, bot - 0.04 * span), top + 0.06 * span];
        },
        draw: function(u){
          clip(u, function(ctx){
            line(u, S.edge, col("c-gold"), 2, {step: true});
            line(u, S.ack, col("c-green"), 2, {step: true});
            var n = S.seg ? lower(S.seg.t, u.scales.x.max) - lower(S.seg.t, u.scales.x.min) : 0;
            bars(u, S.seg, col("c-blue"), n < 400 ? 2 : 1);
            bars(u, S.sack, col("c-purple"), 2);
            bars(u, S.rex, col("c-red"), 3, true);
            if (S.zero) {
              ctx.fillStyle = col("c-magenta");
              visible(S.zero, u.scales.x.min, u.scales.x.max, u.bbox.width / pr).forEach(function(i){
                var x = X(u, S.zero.t[i]), y = Y(u, S.zero.v[i]), r = 6 * pr;
                ctx.beginPath(); ctx.moveTo(x, y - r); ctx.lineTo(x - r, y + r); ctx.lineTo(x + r, y + r); ctx.closePath(); ctx.fill();
              });
            }
          });
        },
        tip: function(t){
          var o = [], i = at(S.seg, t);
          if (i >= 0) { o.push(["data segments", bytes(S.seg.lo[i]) + " – " + bytes(S.seg.hi[i]) + " at " + S.seg.t[i].toFixed(4) + " s"]); }
          i = at(S.ack, t); if (i >= 0) { o.push(["cumulative ACK", bytes(S.ack.v[i])]); }
          i = at(S.edge, t); if (i >= 0) { o.push(["window edge", bytes(S.edge.v[i])]); }
          i = at(S.sack, t); if (i >= 0 && t - S.sack.t[i] < 0.05 * (d.x_max || 1)) { o.push(["SACK block", bytes(S.sack.lo[i]) + " – " + bytes(S.sack.hi[i])]); }
          i = at(S.rex, t); if (i >= 0 && t - S.rex.t[i] < 0.05 * (d.x_max || 1)) { o.push(["retransmission", bytes(S.rex.lo[i]) + " at " + S.rex.t[i].toFixed(4) + " s"]); }
          return o;
        }
      }
    };

    function shown(fig, u){
      if (u.scales.x.min === null || u.scales.x.max === null) { return; }
      fig.setAttribute("data-xmin", u.scales.x.min.toFixed(6));
      fig.setAttribute("data-xmax", u.scales.x.max.toFixed(6));
    }

    Array.prototype.forEach.call(section.querySelectorAll("figure.chart"), function(fig){
      var k = kinds[fig.getAttribute("data-kind")];
      var box = fig.querySelector(".plot");
      if (!k || !box) { return; }
      var tip = document.createElement("div"); tip.className = "tip"; fig.appendChild(tip);
      var opts = {
        width: Math.max(320, box.clientWidth || 1100), height: 300,
        legend: {show: false},
        cursor: {sync: {key: key, setSeries: false}, drag: {x: true, y: false, setScale: true}, points: {show: false}, y: false},
        scales: {
          x: {time: false, range: function(u, a, b){ return [a, b]; }},
          y: {auto: true, range: function(u){ var x = u.scales.x; return k.yrange(x.min === undefined || x.min === null ? 0 : x.min, x.max === undefined || x.max === null ? d.x_max : x.max); }}
        },
        axes: [
          {label: "seconds since the flow's first packet", stroke: col("c-ink"), grid: {stroke: "#e2e2e2"}},
          {label: k.label, size: 78, stroke: col("c-ink"), grid: {stroke: "#e2e2e2"}, values: function(u, splits){ return splits.map(k.fmt); }}
        ],
        series: [{}, {stroke: "transparent", points: {show: false}}],
        hooks: {
          draw: [function(u){ k.draw(u); }],
          setScale: [function(u, name){
            if (name !== "x") { return; }
            shown(fig, u);
            if (syncing || u.scales.x.min === null) { return; }
            syncing = true;
            plots.forEach(function(o){ if (o !== u) { o.setScale("x", {min: u.scales.x.min, max: u.scales.x.max}); } });
            syncing = false;
          }],
          setCursor: [function(u){
            var left = u.cursor.left;
            if (left === undefined || left === null || left < 0) { tip.style.display = "none"; return; }
            var t = u.posToVal(left, "x"), rows = k.tip(t, u);
            tip.innerHTML = "";
            var h = document.createElement("b"); h.textContent = t.toFixed(4) + " s"; tip.appendChild(h);
            rows.forEach(function(r){ var line = document.createElement("div"); line.textContent = r[0] + ": " + r[1]; tip.appendChild(line); });
            tip.style.display = "block";
            var x = box.offsetLeft + u.over.offsetLeft + left + 14;
            if (x + tip.offsetWidth > fig.clientWidth) { x = box.offsetLeft + u.over.offsetLeft + left - tip.offsetWidth - 14; }
            tip.style.left = Math.max(0, x) + "px";
            tip.style.top = (box.offsetTop + 8) + "px";
          }]
        }
      };
      var u = new uPlot(opts, [[0, d.x_max], [0, 0]], box);
      u.over.addEventListener("mouseleave", function(){ tip.style.display = "none"; });
      plots.push(u);
      shown(fig, u);
    });
    window.addEventListener("resize", function(){
      plots.forEach(function(u){ var w = u.root.parentNode.clientWidth; if (w > 0) { u.setSize({width: w, height: 300}); } });
    });
  }

  table();
  if (typeof uPlot === "function") {
    Array.prototype.forEach.call(document.querySelectorAll("section.flow"), flowGraphs);
  }
  root.setAttribute("data-ready", "1");
})();
