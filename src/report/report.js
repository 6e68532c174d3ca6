// worksheet report: timeline panels, one per clock, drawn on canvases from the intervals
// embedded in the page. Zoom (wheel, or the + / − buttons) and pan (drag) recompute each
// pixel column's exact busy time, time at depth >= 2 and deepest overlap from the
// intervals clipped to that column: nothing is sampled. Times are integer nanoseconds
// relative to each panel's clock origin, the one `worksheet render` names on its axis
// (exact below 2^53 ns, about 104 days). The full view is [from, from + span].
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message || e));
    document.body.setAttribute("data-errors", errors.join(" | "));
  });
  var LEFT = 190, RIGHT = 24, LANE_H = 30, AXIS_H = 34;
  var C = {
    phase: "#4e79a7", range: "#8a8a8a", covered: "#76b7b2", overlap: "#f28e2b",
    known: "#2f6f2f", unknown: "#b3261e", tick: "#222222", wait: "#b07aa1",
    grid: "#e6e6e6", text: "#222222", sub: "#666666"
  };
  var UNITS = [["s", 1e9], ["ms", 1e6], ["us", 1e3], ["ns", 1]];

  function fmt(ns) {
    var a = Math.abs(ns);
    for (var i = 0; i < UNITS.length; i++) {
      if (a >= UNITS[i][1] || UNITS[i][1] === 1) {
        var v = ns / UNITS[i][1];
        return (Math.round(v * 1000) / 1000) + " " + UNITS[i][0];
      }
    }
    return ns + " ns";
  }

  // Exact, as the engine prints a duration (`units::Nanos`): the natural unit (ns under
  // 1 us, us under 1 ms, ms under 1 s, else s) and every digit, trailing zeros dropped.
  function exact(ns) {
    var a = Math.abs(ns), sign = ns < 0 ? "-" : "", unit = UNITS[3];
    for (var i = 0; i < UNITS.length; i++) { if (a >= UNITS[i][1]) { unit = UNITS[i]; break; } }
    var per = unit[1], whole = Math.floor(a / per), frac = a - whole * per;
    if (frac === 0) return sign + whole + " " + unit[0];
    var digits = String(per).length - 1, text = String(frac);
    while (text.length < digits) text = "0" + text;
    return sign + whole + "." + text.replace(/0+$/, "") + " " + unit[0];
  }

  // A time range as text: exact integer ns after the clock's origin.
  function range(s, e) {
    return "start +" + s + " ns, end +" + e + " ns after the origin, duration " + (e - s) +
      " ns (" + exact(e - s) + ")";
  }

  function niceStep(span, n) {
    var want = Math.max(1, span / n), p = 1;
    while (p * 10 <= want) p *= 10;
    if (p >= want) return p;
    if (2 * p >= want) return 2 * p;
    if (5 * p >= want) return 5 * p;
    return 10 * p;
  }

  // Exact per-column figures of sorted intervals [s0, e0, s1, e1, ...] in [v0, v1).
  function columns(iv, v0, v1, w) {
    var bounds = new Array(w + 1), span = v1 - v0, k, i;
    for (k = 0; k <= w; k++) bounds[k] = v0 + Math.floor(span * k / w);
    var buckets = new Array(w);
    for (k = 0; k < w; k++) buckets[k] = [];
    for (i = 0; i < iv.length; i += 2) {
      var s = Math.max(iv[i], v0), e = Math.min(iv[i + 1], v1);
      if (e <= s) continue;
      var c = Math.max(0, Math.min(w - 1, Math.floor((s - v0) * w / span)));
      while (c > 0 && bounds[c] > s) c--;
      while (c + 1 < w && bounds[c + 1] <= s) c++;
      for (; c < w && bounds[c] < e; c++) {
        var a = Math.max(s, bounds[c]), b = Math.min(e, bounds[c + 1]);
        if (a < b) buckets[c].push(a, b);
      }
    }
    var out = new Array(w);
    for (k = 0; k < w; k++) {
      var bk = buckets[k], pts = [];
      for (i = 0; i < bk.length; i += 2) { pts.push([bk[i], 1], [bk[i + 1], -1]); }
      pts.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
      var depth = 0, busy = 0, over = 0, maxd = 0, last = 0;
      for (i = 0; i < pts.length; i++) {
        var t = pts[i][0];
        if (depth >= 1) busy += t - last;
        if (depth >= 2) over += t - last;
        depth += pts[i][1];
        if (depth > maxd) maxd = depth;
        last = t;
      }
      out[k] = { start: bounds[k], end: bounds[k + 1], busy: busy, over: over, depth: maxd };
    }
    return out;
  }

  function Panel(root, data) {
    this.root = root;
    this.data = data;
    this.from = data.from || 0;
    this.v0 = this.from;
    this.v1 = this.from + Math.max(1, data.span);
    this.canvas = root.querySelector("canvas");
    this.tip = root.querySelector(".tip");
    this.info = root.querySelector(".view");
    this.picked = root.querySelector(".picked");
    this.mark = null;
    var self = this;
    this.canvas.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      self.zoom(ev.deltaY < 0 ? 0.5 : 2, ev.offsetX);
    }, { passive: false });
    var drag = null;
    this.canvas.addEventListener("mousedown", function (ev) { drag = { x: ev.offsetX, v0: self.v0, v1: self.v1 }; });
    window.addEventListener("mouseup", function () { drag = null; });
    // A click (no drag): a step's bracket zooms to its step; anything else keeps its figures.
    this.canvas.addEventListener("click", function (ev) {
      if (Math.abs(ev.offsetX - (self.downX === undefined ? ev.offsetX : self.downX)) > 3) return;
      self.click(ev.offsetX, ev.offsetY);
    });
    this.canvas.addEventListener("mousedown", function (ev) { self.downX = ev.offsetX; });
    this.canvas.addEventListener("mousemove", function (ev) {
      if (drag) {
        var per = (drag.v1 - drag.v0) / self.plotW();
        var dv = Math.round((drag.x - ev.offsetX) * per);
        self.setView(drag.v0 + dv, drag.v1 + dv);
      } else {
        self.hover(ev.offsetX, ev.offsetY);
      }
    });
    this.canvas.addEventListener("mouseleave", function () { self.tip.style.display = "none"; });
    this.canvas.addEventListener("dblclick", function () { self.setView(self.from, self.from + Math.max(1, data.span)); });
    root.querySelector(".zin").addEventListener("click", function () { self.zoom(0.5, LEFT + self.plotW() / 2); });
    root.querySelector(".zout").addEventListener("click", function () { self.zoom(2, LEFT + self.plotW() / 2); });
    root.querySelector(".reset").addEventListener("click", function () { self.setView(self.from, self.from + Math.max(1, data.span)); });
  }

  Panel.prototype.plotW = function () { return Math.max(50, this.canvas.width - LEFT - RIGHT); };

  Panel.prototype.zoom = function (factor, x) {
    var at = this.v0 + (x - LEFT) / this.plotW() * (this.v1 - this.v0);
    var len = Math.max(this.plotW(), Math.round((this.v1 - this.v0) * factor));
    var v0 = Math.round(at - (at - this.v0) * len / (this.v1 - this.v0));
    this.setView(v0, v0 + len);
  };

  Panel.prototype.setView = function (v0, v1) {
    var full = Math.max(1, this.data.span), len = Math.min(v1 - v0, full);
    v0 = Math.max(this.from, Math.min(v0, this.from + full - len));
    this.v0 = v0;
    this.v1 = v0 + len;
    this.draw();
  };

  Panel.prototype.x = function (t) { return LEFT + (t - this.v0) / (this.v1 - this.v0) * this.plotW(); };

  Panel.prototype.draw = function () {
    var d = this.data, cv = this.canvas, g = cv.getContext("2d"), self = this;
    var width = this.root.clientWidth || 1100;
    cv.width = width;
    var ys = [], total = 0;
    d.lanes.forEach(function (lane) {
      lane.h = lane.items || lane.steps ? Math.max(1, lane.rows || 1) * 20 + 12 : LANE_H;
      ys.push(total);
      total += lane.h;
    });
    this.ys = ys;
    cv.height = total + AXIS_H;
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, cv.width, cv.height);
    var w = this.plotW(), cols = Math.floor(w);
    // Grid and axis.
    var step = niceStep(this.v1 - this.v0, Math.max(2, Math.floor(w / 110)));
    var first = Math.ceil(this.v0 / step) * step, yAxis = total;
    g.font = "11px 'DejaVu Sans', Verdana, sans-serif";
    g.textAlign = "center";
    for (var t = first; t <= this.v1; t += step) {
      var gx = this.x(t);
      g.fillStyle = C.grid; g.fillRect(gx, 0, 1, yAxis);
      g.fillStyle = C.text; g.fillRect(gx, yAxis, 1, 5);
      g.fillText(fmt(t), gx, yAxis + 17);
    }
    g.fillStyle = "#333333"; g.fillRect(LEFT, yAxis, w, 1);
    this.cols = [];
    d.lanes.forEach(function (lane, li) {
      var y = ys[li];
      if (li % 2 === 1) { g.fillStyle = "#f5f5f5"; g.fillRect(0, y, LEFT, lane.h); }
      g.fillStyle = "#dddddd"; g.fillRect(0, y, cv.width, 1);
      g.textAlign = "left";
      g.fillStyle = C.text; g.font = "bold 11px 'DejaVu Sans', Verdana, sans-serif";
      g.fillText(lane.title, 8, y + 13, LEFT - 14);
      g.fillStyle = C.sub; g.font = "10px 'DejaVu Sans', Verdana, sans-serif";
      g.fillText(lane.subtitle, 8, y + 25, LEFT - 14);
      g.font = "10px 'DejaVu Sans', Verdana, sans-serif";
      if (lane.items) {
        lane.items.forEach(function (it) {
          if (it.e < self.v0 || it.s > self.v1) return;
          var x0 = Math.max(LEFT, self.x(it.s)), x1 = Math.min(LEFT + w, Math.max(self.x(it.e), x0 + 1.5));
          var ry = y + 4 + (it.row || 0) * 20;
          if (it.kind === "known") {
            g.strokeStyle = C.known; g.lineWidth = 2;
            g.beginPath(); g.moveTo(x0, ry + 8); g.lineTo(x0, ry + 16); g.lineTo(x1, ry + 16); g.lineTo(x1, ry + 8); g.stroke();
          } else if (it.kind === "unknown") {
            g.fillStyle = "#fdeceb"; g.fillRect(x0, ry + 2, x1 - x0, 16);
            g.strokeStyle = C.unknown; g.lineWidth = 1; g.setLineDash([4, 2]);
            g.strokeRect(x0, ry + 2, x1 - x0, 16); g.setLineDash([]);
          } else {
            g.fillStyle = it.colour || C.phase; g.fillRect(x0, ry + 2, x1 - x0, 16);
          }
          var label = it.label;
          if (g.measureText(label).width + 6 <= x1 - x0) {
            g.fillStyle = it.kind === "known" ? C.known : it.kind === "unknown" ? C.unknown : "#ffffff";
            g.textAlign = "center";
            g.fillText(label, (x0 + x1) / 2, ry + (it.kind === "known" ? 12 : 14));
          }
        });
      } else if (lane.steps) {
        self.drawSteps(g, lane, y, w);
      } else if (lane.kind === "ticks") {
        g.fillStyle = lane.colour || C.tick;
        lane.t.forEach(function (tt) {
          if (tt < self.v0 || tt > self.v1) return;
          g.fillRect(self.x(tt), y + 6, 1.5, lane.h - 10);
        });
      } else if (lane.ni && self.visible(lane) * 6 <= w) {
        // Zoomed in far enough: each interval is a bar with its name, as the PNG draws it.
        self.cols[li] = null;
        var bc = lane.kind === "ranges" ? C.range : C.phase;
        for (var q = 0; q < lane.iv.length; q += 2) {
          var s0 = lane.iv[q], e0 = lane.iv[q + 1];
          if (e0 < self.v0 || s0 > self.v1) continue;
          var bx0 = Math.max(LEFT, self.x(s0)), bx1 = Math.min(LEFT + w, Math.max(self.x(e0), bx0 + 1.5));
          g.fillStyle = bc; g.fillRect(bx0, y + 5, bx1 - bx0, LANE_H - 12);
          if (bx1 - bx0 > 24) {
            g.fillStyle = "#ffffff"; g.textAlign = "left";
            g.fillText(d.names[lane.ni[q / 2]], bx0 + 3, y + 18, bx1 - bx0 - 6);
          }
        }
      } else {
        var colour = lane.kind === "ranges" ? C.range : lane.kind === "covered" ? C.covered : C.phase;
        var cs = columns(lane.iv, self.v0, self.v1, cols);
        self.cols[li] = cs;
        var h = LANE_H - 10, px = w / cols;
        for (var k = 0; k < cs.length; k++) {
          var c = cs[k], len = Math.max(1, c.end - c.start);
          if (c.busy > 0) {
            var bh = c.busy >= len ? h : Math.min(h - 1, Math.max(1, c.busy / len * h));
            g.fillStyle = colour; g.fillRect(LEFT + k * px, y + 5 + h - bh, px + 0.3, bh);
          }
          if (c.over > 0) {
            var oh = c.over >= len ? h : Math.min(h - 1, Math.max(1, c.over / len * h));
            g.fillStyle = C.overlap; g.fillRect(LEFT + k * px, y + 5 + h - oh, px + 0.3, oh);
          }
        }
      }
    });
    if (this.mark && this.mark.e >= this.v0 && this.mark.s <= this.v1) {
      // The evidence's time range, over every lane (at least 2 px wide).
      var mx0 = Math.max(LEFT, this.x(this.mark.s)), mx1 = Math.min(LEFT + w, Math.max(this.x(this.mark.e), mx0 + 2));
      g.fillStyle = "rgba(255, 190, 0, 0.28)"; g.fillRect(mx0, 0, mx1 - mx0, yAxis);
      g.fillStyle = "#c77c00"; g.fillRect(mx0, 0, 1, yAxis); g.fillRect(mx1 - 1, 0, 1, yAxis);
    }
    g.textAlign = "left";
    this.info.textContent = "view +" + exact(this.v0) + " … +" + exact(this.v1) + " after the origin (" +
      exact(this.v1 - this.v0) + " wide; one pixel column ≈ " + fmt(Math.max(1, Math.floor((this.v1 - this.v0) / cols))) + ")";
    this.root.setAttribute("data-view", this.v0 + ".." + this.v1);
  };

  // A steps lane: each step a bracket over its range, named when it fits.
  Panel.prototype.drawSteps = function (g, lane, y, w) {
    var self = this;
    lane.steps.forEach(function (st) {
      if (st.e < self.v0 || st.s > self.v1) return;
      var x0 = Math.max(LEFT, self.x(st.s)), x1 = Math.min(LEFT + w, Math.max(self.x(st.e), x0 + 1.5));
      var ry = y + 6 + st.row * 20;
      g.strokeStyle = "#5a3e8c"; g.lineWidth = 1.5;
      g.beginPath(); g.moveTo(x0, ry + 14); g.lineTo(x0, ry + 2); g.lineTo(x1, ry + 2); g.lineTo(x1, ry + 14); g.stroke();
      var label = st.name + " (" + st.d + ")";
      if (g.measureText(label).width + 8 > x1 - x0) label = st.name;
      if (g.measureText(label).width + 8 <= x1 - x0) {
        g.fillStyle = "#5a3e8c"; g.textAlign = "center";
        g.fillText(label, (x0 + x1) / 2, ry + 13);
      }
    });
  };

  // The step of a steps lane under time t in row `row` (any row when none is there).
  Panel.prototype.stepAt = function (lane, t, row) {
    var best = null;
    lane.steps.forEach(function (st) {
      if (st.s <= t && t <= st.e && (best === null || (st.row === row && best.row !== row))) best = st;
    });
    return best;
  };

  // Zooms to [s, e] (a margin each side; an instant gets 20 us each side) and marks it.
  Panel.prototype.goTo = function (s, e, why) {
    var pad = Math.max(10000, Math.round((e - s) / 10));
    if (s === e) pad = 20000;
    this.mark = { s: s, e: e };
    this.setView(s - pad, e + pad);
    var off = s < this.from || e > this.from + Math.max(1, this.data.span);
    if (why) this.pick(why + " — " + range(s, e) + (off ? "; partly outside this page's view (--window)" : ""));
  };

  Panel.prototype.pick = function (text) {
    if (this.picked) { this.picked.textContent = text; this.picked.style.display = "block"; }
  };

  // How many of a lane's intervals overlap the view.
  Panel.prototype.visible = function (lane) {
    var n = 0;
    for (var i = 0; i < lane.iv.length; i += 2) {
      if (lane.iv[i + 1] >= this.v0 && lane.iv[i] <= this.v1) n++;
    }
    return n;
  };

  // The named interval of `lane` under time t (the shortest of those holding it), as text
  // with its exact start, end and duration in ns after the clock's origin; or null.
  Panel.prototype.named = function (lane, t) {
    if (!lane.ni) return null;
    var best = -1;
    for (var i = 0; i < lane.iv.length; i += 2) {
      if (lane.iv[i] <= t && t <= lane.iv[i + 1] &&
          (best < 0 || lane.iv[i + 1] - lane.iv[i] < lane.iv[best + 1] - lane.iv[best])) best = i;
    }
    if (best < 0) return null;
    var s0 = lane.iv[best], e0 = lane.iv[best + 1];
    return this.data.names[lane.ni[best / 2]] + " — " + range(s0, e0);
  };

  Panel.prototype.hover = function (x, y) {
    this.hovered = null;
    var li = 0;
    while (li + 1 < this.ys.length && this.ys[li + 1] <= y) li++;
    var lane = this.data.lanes[li];
    if (!lane || x < LEFT || x > LEFT + this.plotW()) { this.tip.style.display = "none"; return; }
    var cols = this.cols[li], text;
    var k = Math.floor((x - LEFT) / this.plotW() * Math.floor(this.plotW()));
    var at = Math.round(this.v0 + (x - LEFT) / this.plotW() * (this.v1 - this.v0));
    var name = this.named(lane, at);
    var step = lane.steps ? this.stepAt(lane, at, Math.floor((y - this.ys[li] - 6) / 20)) : null;
    if (step) {
      text = "step " + step.name + " — " + range(step.s, step.e).replace(/ \(.*\)$/, "") +
        " (" + step.d + ", exact; from " + step.from + ")";
    } else if (name) {
      text = lane.title + ": " + name;
    } else if (cols && cols[k]) {
      var c = cols[k];
      text = lane.title + " — column +" + c.start + " ns … +" + c.end + " ns: busy " + c.busy + " ns of " +
        (c.end - c.start) + " ns, at depth ≥ 2 " + c.over + " ns, deepest " + c.depth;
    } else {
      var t = Math.round(this.v0 + (x - LEFT) / this.plotW() * (this.v1 - this.v0));
      text = lane.title + " — +" + t + " ns after the origin";
      if (lane.items) {
        var row = Math.floor((y - this.ys[li] - 4) / 20);
        lane.items.forEach(function (it) { if (it.s <= t && t <= it.e && (it.row || 0) === row) text = it.title; });
      }
    }
    this.tip.textContent = text;
    this.tip.style.display = "block";
    this.hovered = { lane: lane, step: step, text: text };
    this.tip.style.left = Math.min(x + 12, this.canvas.width - 320) + "px";
    this.tip.style.top = (y + 14) + "px";
  };

  Panel.prototype.click = function (x, y) {
    this.hover(x, y);
    var h = this.hovered;
    if (!h) return;
    if (h.step) {
      this.goTo(h.step.s, h.step.e, null);
      setHash(this, h.step.s, h.step.e);
    }
    this.pick(h.text);
  };

  var made = [];

  // `#at=PANEL@S..E`: panel PANEL zoomed to [S, E] (ns after its clock's origin), marked.
  function setHash(panel, s, e) {
    var hash = "#at=" + made.indexOf(panel) + "@" + s + ".." + e;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // A link to a time: `#at=PANEL@T@LANE` (T in ns after the clock's origin, LANE a lane
  // title) zooms panel PANEL around T and shows what lies there, as hovering does;
  // `#at=PANEL@S..E` zooms to [S, E] and marks it.
  function follow() {
    var hash = decodeURIComponent(location.hash);
    var r = /^#at=(\d+)@(-?\d+)\.\.(-?\d+)$/.exec(hash);
    if (r && made[+r[1]]) {
      made[+r[1]].goTo(+r[2], +r[3], "linked range");
      made[+r[1]].root.scrollIntoView();
      return;
    }
    var m = /^#at=(\d+)@(-?\d+)@(.+)$/.exec(hash);
    if (m && made[+m[1]]) {
      var pn = made[+m[1]], t = +m[2], li = -1;
      pn.data.lanes.forEach(function (l, k) { if (li < 0 && l.title === m[3]) li = k; });
      if (li >= 0) {
        pn.setView(t - 20000, t + 20000);
        pn.hover(pn.x(t), pn.ys[li] + 10);
        document.body.setAttribute("data-hover", pn.tip.textContent);
      }
    }
  }

  // An audit finding's evidence: its times are ns after the audit's origin; the panel of
  // the audit's clock (`audit`: that origin after the panel's) that holds them shows them.
  function evidence(link, ev) {
    var t0 = +link.getAttribute("data-t0"), t1 = +link.getAttribute("data-t1"), target = -1;
    made.forEach(function (p, k) {
      var a = p.data.audit;
      if (target >= 0 || a === undefined) return;
      if (t0 + a <= p.from + Math.max(1, p.data.span) && t1 + a >= p.from) target = k;
    });
    if (target < 0) {
      made.forEach(function (p, k) { if (target < 0 && p.data.audit !== undefined) target = k; });
    }
    if (target < 0) {
      link.title = "which clock this time is on is unknown: the case has several clocks";
      return;
    }
    ev.preventDefault();
    var p = made[target], s = t0 + p.data.audit, e = t1 + p.data.audit;
    p.goTo(s, e, "evidence: " + link.textContent);
    setHash(p, s, e);
    p.root.scrollIntoView();
    document.body.setAttribute("data-evidence", target + "@" + s + ".." + e);
  }

  function start() {
    var data = JSON.parse(document.getElementById("timeline-data").textContent);
    var panels = document.querySelectorAll(".panel");
    var drawn = 0;
    for (var i = 0; i < panels.length; i++) {
      var p = new Panel(panels[i], data.panels[i]);
      p.draw();
      made.push(p);
      drawn++;
    }
    document.body.setAttribute("data-panels-drawn", String(drawn));
    follow();
    window.addEventListener("hashchange", follow);
    var links = document.querySelectorAll("a.evidence");
    for (var k = 0; k < links.length; k++) {
      links[k].addEventListener("click", evidence.bind(null, links[k]));
    }
    // Milliseconds from navigation start to every panel drawn (the page's own load time).
    document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
    if (errors.length === 0) document.body.setAttribute("data-status", "ok");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
