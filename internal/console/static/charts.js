// Small line charts on <canvas>: a time axis (seconds before now), a y
// axis from 0 to a rounded maximum, and one line per series.
"use strict";

(function () {
  // niceMax rounds v up to 1, 2 or 5 times a power of ten.
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) {
      if (v <= m * p) return m * p;
    }
    return 10 * p;
  }

  function fmt(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
    if (v >= 1e3) return (v / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
    if (v >= 10 || Number.isInteger(v)) return String(Math.round(v));
    return String(Number(v.toFixed(2)));
  }

  function ago(ms) {
    const s = Math.round(ms / 1000);
    if (s <= 0) return "now";
    if (s < 60) return "-" + s + "s";
    return "-" + Math.floor(s / 60) + "m" + (s % 60 ? String(s % 60).padStart(2, "0") : "");
  }

  // line draws spec on canvas. spec: {times: [ms], spanMs, series:
  // [{name, color, values: [number]}]}.
  function line(canvas, spec) {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 400, h = canvas.clientHeight || 220;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 46, right = 12, top = 26, bottom = 22;
    const pw = w - left - right, ph = h - top - bottom;
    const times = spec.times;
    const now = times.length ? times[times.length - 1] : Date.now();
    const span = Math.max(spec.spanMs || 0, 1000);
    let ymax = 0;
    for (const s of spec.series) for (const v of s.values) if (v > ymax) ymax = v;
    ymax = niceMax(ymax);
    // Steps of 1, 2 or 5 units: five divisions for 1 and 5, four for 2.
    const mant = ymax / Math.pow(10, Math.floor(Math.log10(ymax)));
    const divs = Math.round(mant) === 2 ? 4 : 5;

    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    g.lineWidth = 1;
    // Grid and y labels.
    for (let i = 0; i <= divs; i++) {
      const y = top + ph - (ph * i) / divs;
      g.strokeStyle = i === 0 ? "#c9ced6" : "#eef0f3";
      g.beginPath(); g.moveTo(left, Math.round(y) + 0.5); g.lineTo(left + pw, Math.round(y) + 0.5); g.stroke();
      g.fillStyle = "#6b7280"; g.textAlign = "right";
      g.fillText(fmt((ymax * i) / divs), left - 6, y);
    }
    // X labels: five ticks across the span.
    g.textAlign = "center"; g.textBaseline = "top";
    for (let i = 0; i <= 4; i++) {
      const x = left + (pw * i) / 4;
      g.fillText(ago(span - (span * i) / 4), x, top + ph + 6);
    }
    // Series.
    const xOf = (t) => left + pw - ((now - t) / span) * pw;
    const yOf = (v) => top + ph - (v / ymax) * ph;
    g.save();
    g.beginPath(); g.rect(left, top - 1, pw, ph + 2); g.clip();
    for (const s of spec.series) {
      g.strokeStyle = s.color; g.lineWidth = 2; g.lineJoin = "round";
      g.setLineDash(s.dash ? [5, 4] : []);
      g.beginPath();
      let started = false;
      for (let i = 0; i < times.length; i++) {
        const x = xOf(times[i]), y = yOf(s.values[i]);
        if (!started) { g.moveTo(x, y); started = true; } else { g.lineTo(x, y); }
      }
      g.stroke();
      g.setLineDash([]);
      if (s.fill && times.length > 1) {
        g.lineTo(xOf(times[times.length - 1]), top + ph);
        g.lineTo(xOf(times[0]), top + ph);
        g.closePath();
        g.globalAlpha = 0.12; g.fillStyle = s.color; g.fill(); g.globalAlpha = 1;
      }
    }
    g.restore();
    // Legend with the latest values.
    g.textAlign = "left"; g.textBaseline = "middle";
    let lx = left;
    for (const s of spec.series) {
      const last = s.values.length ? s.values[s.values.length - 1] : 0;
      const label = s.name + " " + fmt(last);
      g.fillStyle = s.color; g.fillRect(lx, 9, 10, 3);
      g.fillStyle = "#1d2330"; g.fillText(label, lx + 14, 11);
      lx += g.measureText(label).width + 30;
    }
    if (!times.length) {
      g.fillStyle = "#6b7280"; g.textAlign = "center";
      g.fillText("collecting…", left + pw / 2, top + ph / 2);
    }
    canvas.dataset.points = String(times.length);
  }

  window.WardenCharts = { line: line, niceMax: niceMax };
})();
