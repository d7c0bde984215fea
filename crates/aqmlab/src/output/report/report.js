// Draws the plots of an aqmlab report.html with uPlot: the plot specs are
// the JSON document in #aqmlab-data (see crates/aqmlab/src/output/report.rs).
(function () {
  "use strict";
  var errors = (window.aqmlabErrors = []);
  window.addEventListener("error", function (e) {
    errors.push(String(e.message));
    var box = document.getElementById("aqmlab-errors");
    if (!box) {
      box = document.createElement("pre");
      box.id = "aqmlab-errors";
      document.body.insertBefore(box, document.body.firstChild);
    }
    box.textContent = "report error: " + errors.join("\n");
  });
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var specs = JSON.parse(document.getElementById("aqmlab-data").textContent);

  // uPlot wants one x column shared by every series: the union of their
  // x values, null where a series has no point (spanGaps draws across).
  function align(p) {
    var xs = p.series.map(function (s, i) {
      if (!p.categories || p.series.length < 2) return s.x;
      // Side by side around each category, so that error bars do not overlap.
      var off = (i - (p.series.length - 1) / 2) * Math.min(0.12, 0.6 / p.series.length);
      return s.x.map(function (x) { return x + off; });
    });
    var first = xs[0] || [];
    var same = xs.every(function (x) {
      return x.length === first.length && x.every(function (v, k) { return v === first[k]; });
    });
    if (same) {
      return { x: first, y: p.series.map(function (s) { return s.y; }),
        e: p.series.map(function (s) { return s.err || null; }) };
    }
    var all = [];
    xs.forEach(function (x) { all = all.concat(x); });
    all = Array.from(new Set(all)).sort(function (a, b) { return a - b; });
    var at = new Map(all.map(function (x, k) { return [x, k]; }));
    function spread(s, col) {
      var c = new Array(all.length).fill(null);
      xs[s].forEach(function (x, k) { c[at.get(x)] = col[k]; });
      return c;
    }
    return {
      x: all,
      y: p.series.map(function (s, i) { return spread(i, s.y); }),
      e: p.series.map(function (s, i) { return s.err ? spread(i, s.err) : null; }),
    };
  }

  function errorBars(u, errs) {
    var ctx = u.ctx, r = window.devicePixelRatio || 1;
    errs.forEach(function (e, i) {
      if (!e || !u.series[i + 1].show) return;
      ctx.save();
      ctx.strokeStyle = palette[i % palette.length];
      ctx.lineWidth = 1.5 * r;
      ctx.beginPath();
      var xs = u.data[0], ys = u.data[i + 1];
      for (var k = 0; k < xs.length; k++) {
        var y = ys[k], h = e[k];
        if (y == null || h == null || !isFinite(h)) continue;
        var cx = u.valToPos(xs[k], "x", true);
        var y0 = u.valToPos(y - h, "y", true), y1 = u.valToPos(y + h, "y", true);
        ctx.moveTo(cx, y0); ctx.lineTo(cx, y1);
        ctx.moveTo(cx - 4 * r, y0); ctx.lineTo(cx + 4 * r, y0);
        ctx.moveTo(cx - 4 * r, y1); ctx.lineTo(cx + 4 * r, y1);
      }
      ctx.stroke();
      ctx.restore();
    });
  }

  function make(p, el) {
    var d = align(p);
    var cats = p.categories;
    var lo = Infinity, hi = -Infinity;
    d.y.forEach(function (col, i) {
      col.forEach(function (y, k) {
        if (y == null || !isFinite(y)) return;
        var h = d.e[i] && d.e[i][k] != null && isFinite(d.e[i][k]) ? d.e[i][k] : 0;
        lo = Math.min(lo, y - h); hi = Math.max(hi, y + h);
      });
    });
    // Points with error bars: the y range covers the bars.
    var yrange = function () {
      if (!isFinite(lo)) return [0, 1];
      var pad = hi > lo ? (hi - lo) * 0.08 : Math.abs(hi) * 0.1 || 1;
      return [lo - pad, hi + pad];
    };
    var xaxis = { label: p.x_label };
    var xscale = { time: false };
    if (cats) {
      xscale.range = function () { return [-0.5, cats.length - 0.5]; };
      xaxis.splits = function () { return cats.map(function (_, k) { return k; }); };
      xaxis.values = function (u, sp) { return sp.map(function (k) { return cats[k] || ""; }); };
      xaxis.rotate = cats.length > 6 ? -30 : 0;
      xaxis.size = cats.length > 6 ? 90 : 50;
    }
    var series = [{
      label: p.x_label,
      value: cats ? function (u, v) { return v == null ? "" : cats[Math.round(v)]; } : undefined,
    }];
    p.series.forEach(function (s, i) {
      var c = palette[i % palette.length];
      var o = { label: s.name, stroke: c, width: 1.5, spanGaps: true };
      if (p.kind === "points") {
        o.paths = function () { return null; };
        o.points = { show: true, size: 8, fill: c, stroke: c };
      } else if (p.kind === "steps") {
        o.paths = uPlot.paths.stepped({ align: 1 });
        o.points = { show: false };
      } else {
        o.points = { show: false };
      }
      series.push(o);
    });
    var opts = {
      width: Math.max(320, el.clientWidth || 800),
      height: 320,
      scales: { x: xscale, y: { range: p.kind === "points" ? yrange : undefined } },
      axes: [xaxis, { label: p.y_label, size: 70 }],
      series: series,
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [function (u) { errorBars(u, d.e); }] },
    };
    return new uPlot(opts, [d.x].concat(d.y), el);
  }

  var made = (window.aqmlabPlots = []);
  specs.forEach(function (p, k) {
    var el = document.getElementById("plot-" + k);
    if (el) made.push(make(p, el));
  });
  window.addEventListener("resize", function () {
    made.forEach(function (u) {
      u.setSize({ width: Math.max(320, u.root.parentNode.clientWidth), height: 320 });
    });
  });
  document.body.setAttribute("data-plots-drawn", String(made.length));
})();
