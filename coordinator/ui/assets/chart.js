// A stacked bar chart drawn as SVG with createElementNS: one bar per
// time window, one segment per series (a team), a y axis in the value's
// unit, and a legend. No chart library: the page loads nothing else.

const NS = 'http://www.w3.org/2000/svg';
// COLORS is a palette that tells neighbours apart; series take them in
// order.
const COLORS = ['#0969da', '#1a7f37', '#bf8700', '#cf222e', '#8250df', '#1b7c83', '#bc4c00', '#57606a'];

const W = 760, H = 240;
const PAD = { left: 56, right: 12, top: 12, bottom: 28 };

function svg(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten, so that
// the axis reads in round numbers.
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// num renders a value with at most two decimals, two significant digits
// below 0.01 (a few seconds of one GPU is 0.001 GPU-hours), and as a
// power of ten below 0.001, so that an axis label stays short.
export function num(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 0.01) return String(+v.toFixed(2));
  return a >= 0.001 ? String(+v.toPrecision(2)) : v.toExponential(1);
}

// color gives a series its colour by its place in the series list.
export function color(i) {
  return COLORS[i % COLORS.length];
}

// swatch is a legend's small square in series i's colour.
export function swatch(i) {
  const root = svg('svg', { class: 'swatch', viewBox: '0 0 10 10', width: 10, height: 10, 'aria-hidden': 'true' });
  root.append(svg('rect', { width: 10, height: 10, rx: 2, fill: color(i) }));
  return root;
}

// stacked draws windows [{label, values: {series: number}}] for the
// series named, in that order. unit names the value in the tooltips.
export function stacked(id, windows, series, unit) {
  const root = svg('svg', { id, class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'usage over time' });
  const plotW = W - PAD.left - PAD.right, plotH = H - PAD.top - PAD.bottom;
  const totals = windows.map((w) => series.reduce((s, name) => s + (w.values[name] || 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const y = (v) => PAD.top + plotH - (v / max) * plotH;

  for (let i = 0; i <= 4; i++) { // grid lines and the y axis's labels
    const v = (max * i) / 4;
    root.append(svg('line', { class: 'grid', x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }),
      svg('text', { class: 'tick', x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, num(v)));
  }
  const slot = plotW / Math.max(1, windows.length);
  const barW = Math.max(2, slot * 0.7);
  windows.forEach((w, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    let base = 0;
    series.forEach((name, s) => {
      const v = w.values[name] || 0;
      if (v <= 0) return;
      const rect = svg('rect', { class: 'bar', x, y: y(base + v), width: barW, height: Math.max(0.5, y(base) - y(base + v)),
        fill: color(s), 'data-series': name, 'data-window': w.label, 'data-value': v });
      rect.append(svg('title', null, `${name}, ${w.label}: ${num(v)} ${unit}`));
      root.append(rect);
      base += v;
    });
    if (i % Math.ceil(windows.length / 8) === 0) {
      root.append(svg('text', { class: 'tick', x: x + barW / 2, y: H - 8, 'text-anchor': 'middle' }, w.label));
    }
  });
  root.append(svg('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0) }));
  return root;
}
