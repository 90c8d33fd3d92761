// postbox explorer: the page. Every figure comes from the server's /api (the library the CLI and
// the tests use); this file only keeps the state in the URL, asks the API and draws the answers.
'use strict';

// ---- small helpers ---------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);
const SVG_NS = 'http://www.w3.org/2000/svg';

function svgEl(tag, attrs, parent, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function htmlEl(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

// Numbers as the API sent them; only display rounding here.
function show(x, digits = 4) {
  if (x === null || x === undefined) return '–';
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(digits)));
}

// ---- the API -----------------------------------------------------------------------------------

const errorBox = $('error');
const latest = {};  // per channel: the sequence number of the newest request

function showError(text) {
  errorBox.textContent = text.trim();
  errorBox.hidden = false;
}
function clearError() {
  errorBox.hidden = true;
  errorBox.textContent = '';
}

// GET /api/NAME?params. Returns the JSON, or null after showing the server's one-line message
// (or when a newer request on the same channel has superseded this one).
async function api(name, params, channel) {
  const seq = (latest[channel] = (latest[channel] || 0) + 1);
  const qs = new URLSearchParams(params).toString();
  let res;
  try {
    res = await fetch('/api/' + name + (qs ? '?' + qs : ''));
  } catch (e) {
    if (latest[channel] === seq) showError('postbox: error: the server does not answer (' + e.message + ')');
    return null;
  }
  if (latest[channel] !== seq) return null;
  if (!res.ok) {
    const text = await res.text();
    if (latest[channel] === seq) showError(text);
    return null;
  }
  const json = await res.json();
  return latest[channel] === seq ? json : null;
}

// ---- state in the URL ----------------------------------------------------------------------------

// Each view's state: its URL parameters and their defaults. Only the current view's parameters
// are in the address, so a link shows exactly one picture.
const DEFAULTS = {
  trees: { shape: 'fibo', p: '64', s: '1', r: '3', lambda: '', alpha: '', root: '0', shape2: 'binomial', layers: 'depth', t: '' },
  postal: { lambda: '2', n: '13', nmax: '100', floor: '9' },
  sim: { machine: 'manna', op: 'bcast', algo: 'fibo', p: '19', bytes: '4', placement: '', seed: '', mesh: '', lambda: '', alpha: '', t: '' },
  machine: { p: '' },
};
const VIEWS = Object.keys(DEFAULTS);
const state = { view: 'trees', big: false };
for (const v of VIEWS) state[v] = { ...DEFAULTS[v] };

function readUrl() {
  const q = new URLSearchParams(location.search);
  const view = q.get('view');
  state.view = VIEWS.includes(view) ? view : 'trees';
  state.big = q.get('big') === '1';
  for (const v of VIEWS) state[v] = { ...DEFAULTS[v] };
  const s = state[state.view];
  for (const k of Object.keys(s)) if (q.has(k)) s[k] = q.get(k);
  // A model given as λ replaces the default s and r (they exclude each other).
  if (state.view === 'trees' && q.has('lambda') && !q.has('s')) { s.s = ''; s.r = ''; }
}

function writeUrl() {
  const q = new URLSearchParams();
  q.set('view', state.view);
  const s = state[state.view];
  for (const [k, v] of Object.entries(s)) if (v !== '' && v !== undefined) q.set(k, v);
  if (state.big) q.set('big', '1');
  const url = location.pathname + '?' + q.toString();
  if (url !== location.pathname + location.search) history.replaceState(null, '', url);
}

// ---- views and keyboard ----------------------------------------------------------------------------

const tabs = Array.from(document.querySelectorAll('[role="tab"]'));
const loaded = {};

function selectView(view, focus) {
  state.view = view;
  for (const t of tabs) {
    const on = t.dataset.view === view;
    t.setAttribute('aria-selected', on ? 'true' : 'false');
    t.tabIndex = on ? 0 : -1;
    $('view-' + t.dataset.view).hidden = !on;
    if (on && focus) t.focus();
  }
  clearError();
  VIEW[view].show();
  writeUrl();
}

for (const t of tabs) {
  t.addEventListener('click', () => selectView(t.dataset.view, false));
  t.addEventListener('keydown', (e) => {
    const i = tabs.indexOf(t);
    let j = -1;
    if (e.key === 'ArrowRight') j = (i + 1) % tabs.length;
    if (e.key === 'ArrowLeft') j = (i + tabs.length - 1) % tabs.length;
    if (e.key === 'Home') j = 0;
    if (e.key === 'End') j = tabs.length - 1;
    if (j >= 0) {
      e.preventDefault();
      selectView(tabs[j].dataset.view, true);
    }
  });
}

function typing(e) {
  const t = e.target;
  return t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA') && t.type !== 'range' &&
    t.type !== 'radio';
}

document.addEventListener('keydown', (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || typing(e)) return;
  if (e.key >= '1' && e.key <= '4') {
    selectView(VIEWS[Number(e.key) - 1], true);
    e.preventDefault();
  } else if (e.key === 'p') {
    const b = state.view === 'trees' ? $('tree-play') : state.view === 'sim' ? $('sim-play') : null;
    if (b) { b.click(); e.preventDefault(); }
  } else if (e.key === 'Escape') {
    clearError();
  }
});

$('big').addEventListener('click', () => {
  state.big = !state.big;
  applyBig();
  writeUrl();
  VIEW[state.view].redraw();
});
function applyBig() {
  document.body.classList.toggle('big', state.big);
  $('big').setAttribute('aria-pressed', state.big ? 'true' : 'false');
}

$('copy-link').addEventListener('click', async () => {
  writeUrl();
  try {
    await navigator.clipboard.writeText(location.href);
    $('copy-link').textContent = 'Copied';
  } catch (e) {
    $('copy-link').textContent = 'Address bar has it';
  }
  setTimeout(() => { $('copy-link').textContent = 'Copy link'; }, 1500);
});

// A text field and a slider that show one value.
function pairSlider(textId, rangeId, onChange) {
  const text = $(textId);
  const range = $(rangeId);
  range.addEventListener('input', () => { text.value = range.value; onChange(); });
  text.addEventListener('input', () => {
    const v = Number(text.value);
    if (text.value !== '' && Number.isFinite(v)) range.value = String(v);
    onChange();
  });
}

// An animation clock over [0, end]: a play button and a range input.
function Player(buttonId, rangeId, textId, seconds, onTime) {
  const button = $(buttonId);
  const range = $(rangeId);
  const self = { end: 1, t: 0, playing: false, unit: '' };
  let last = 0;
  function label() {
    $(textId).textContent = 't = ' + show(self.t, 5) + (self.unit ? ' ' + self.unit : '');
  }
  function frame(now) {
    if (!self.playing) return;
    const dt = last ? (now - last) / 1000 : 0;
    last = now;
    self.t = Math.min(self.end, self.t + (self.end * dt) / seconds);
    range.value = String(self.t);
    label();
    onTime(self.t, false);
    if (self.t >= self.end) { self.stop(); onTime(self.t, true); return; }
    requestAnimationFrame(frame);
  }
  self.stop = () => {
    self.playing = false;
    button.setAttribute('aria-pressed', 'false');
    button.textContent = '▶ Play';
  };
  self.set = (end, t, unit) => {
    self.end = end > 0 ? end : 1;
    self.unit = unit || '';
    self.t = Math.max(0, Math.min(self.end, t));
    range.max = String(self.end);
    range.value = String(self.t);
    label();
  };
  button.addEventListener('click', () => {
    if (self.playing) { self.stop(); onTime(self.t, true); return; }
    if (self.t >= self.end) self.t = 0;
    self.playing = true;
    last = 0;
    button.setAttribute('aria-pressed', 'true');
    button.textContent = '❚❚ Pause';
    requestAnimationFrame(frame);
  });
  range.addEventListener('input', () => {
    self.t = Number(range.value);
    label();
    onTime(self.t, true);
  });
  return self;
}

// ---- drawing: trees --------------------------------------------------------------------------------

// Layered tidy layout: x from the leaf order (children in send order, left to right), y the depth
// or the rank of the activation time. Returns positions; the tree itself comes from the API.
function layoutTree(tree, layers) {
  const n = tree.nodes.length;
  const depth = new Array(n).fill(0);
  const order = [];
  const stack = [tree.root];
  while (stack.length) {
    const v = stack.pop();
    order.push(v);
    const ch = tree.nodes[v].children;
    for (let i = ch.length - 1; i >= 0; --i) {
      depth[ch[i]] = depth[v] + 1;
      stack.push(ch[i]);
    }
  }
  const x = new Array(n).fill(0);
  let leaf = 0;
  // Leaves in pre-order get consecutive slots; parents are centred over their children.
  for (const v of order) if (tree.nodes[v].children.length === 0) x[v] = leaf++;
  for (let i = order.length - 1; i >= 0; --i) {
    const v = order[i];
    const ch = tree.nodes[v].children;
    if (ch.length) x[v] = (x[ch[0]] + x[ch[ch.length - 1]]) / 2;
  }
  let row = depth;
  if (layers === 'time') {
    const times = Array.from(new Set(tree.nodes.map((d) => d.time))).sort((a, b) => a - b);
    const index = new Map(times.map((t, i) => [t, i]));
    row = tree.nodes.map((d) => index.get(d.time));
  }
  return { x, row, leaves: Math.max(1, leaf), rows: Math.max(...row) + 1 };
}

// Draws a tree into `box`: each node shows its rank and activation time, each edge its send start.
// Nodes active after `tNow` are drawn pending (the animation).
const TREE_DX = 46, TREE_PAD = 30;
function treeWidth(tree, layers) {
  const big = state.big ? 1.25 : 1;
  return big * (TREE_PAD * 2 + (layoutTree(tree, layers).leaves - 1) * TREE_DX);
}

function drawTree(box, tree, opts) {
  clear(box);
  const L = layoutTree(tree, opts.layers);
  const big = state.big ? 1.25 : 1;
  const dx = TREE_DX * big, dy = 78 * big, pad = TREE_PAD * big, r = 15 * big;
  const width = pad * 2 + (L.leaves - 1) * dx;
  const height = pad * 2 + (L.rows - 1) * dy + 18 * big;
  const avail = Math.max(320, box.clientWidth - 8);
  const scale = Math.max(0.45, Math.min(1, avail / width));
  const svg = svgEl('svg', { width: width * scale, height: height * scale, viewBox: `0 0 ${width} ${height}`,
    role: 'img', 'aria-label': `${tree.shape} tree of ${tree.p} ranks, completion ${tree.completion_label}` }, box);
  const labels = tree.p <= 256;
  const X = (v) => pad + L.x[v] * dx;
  const Y = (v) => pad + L.row[v] * dy;
  const tNow = opts.tNow === undefined ? Infinity : opts.tNow;
  const edges = svgEl('g', {}, svg);
  const nodes = svgEl('g', {}, svg);
  for (const d of tree.nodes) {
    if (d.parent < 0) continue;
    const pending = d.send_start > tNow;
    const g = svgEl('g', { class: 'edge' + (pending ? ' pending' : '') }, edges);
    svgEl('line', { x1: X(d.parent), y1: Y(d.parent), x2: X(d.rank), y2: Y(d.rank) }, g);
    if (labels && scale > 0.55) {
      // Near the child, where siblings' edges are a node's width apart.
      svgEl('text', { x: X(d.parent) + (X(d.rank) - X(d.parent)) * 0.7 + 3, y: Y(d.parent) + (Y(d.rank) - Y(d.parent)) * 0.7,
        'font-size': 11 * big }, g, d.send_label);
    }
  }
  for (const d of tree.nodes) {
    const last = d.time === tree.completion;
    const pending = d.time > tNow;
    const g = svgEl('g', { class: 'node' + (last ? ' last' : '') + (pending ? ' pending' : ''), 'data-rank': d.rank,
      'data-time': d.time_label }, nodes);
    svgEl('circle', { cx: X(d.rank), cy: Y(d.rank), r }, g);
    svgEl('title', {}, g, `rank ${d.rank}: active at ${d.time_label}` +
      (d.parent >= 0 ? `, sent by ${d.parent} at ${d.send_label}` : ' (root)'));
    if (labels) {
      svgEl('text', { class: 'rank', x: X(d.rank), y: Y(d.rank) + 4.5 * big, 'text-anchor': 'middle', 'font-size': 13 * big }, g,
        String(d.rank));
      svgEl('text', { class: 'time', x: X(d.rank) + r * 0.45, y: Y(d.rank) + r + 12 * big, 'text-anchor': 'start', 'font-size': 12 * big },
        g, d.time_label);
    }
  }
  return svg;
}

// The per-rank timeline: ranks in activation order; each send slot [start, start + s] in the
// sender's row, the receive latency (start + s, time] in the receiver's row.
function drawTimeline(box, tree) {
  clear(box);
  const n = tree.nodes.length;
  const order = tree.nodes.map((d) => d.rank).sort((a, b) => tree.nodes[a].time - tree.nodes[b].time || a - b);
  const rowOf = new Array(n);
  order.forEach((v, i) => { rowOf[v] = i; });
  const big = state.big ? 1.25 : 1;
  const rowH = Math.max(2, Math.min(24 * big, 900 / n));
  const left = 70 * big, top = 28 * big;
  const width = Math.max(600, box.clientWidth - 10);
  const end = Math.max(tree.completion, 1e-9);
  const sx = (t) => left + ((width - left - 20) * t) / end;
  const height = top + rowH * n + 10;
  const svg = svgEl('svg', { width, height, role: 'img', 'aria-label': 'per-rank timeline' }, box);
  // Time axis: ticks at round numbers.
  const step = niceStep(end / 12);
  for (let t = 0; t <= end + 1e-9; t += step) {
    svgEl('line', { class: 'grid', x1: sx(t), x2: sx(t), y1: top - 4, y2: height - 8 }, svg);
    svgEl('text', { class: 'small', x: sx(t), y: top - 10, 'text-anchor': 'middle', 'font-size': 12 * big }, svg, show(t));
  }
  const s = tree.s, labels = rowH >= 14;
  for (const d of tree.nodes) {
    const y = top + rowOf[d.rank] * rowH;
    if (labels) svgEl('text', { class: 'small', x: left - 8, y: y + rowH * 0.7, 'text-anchor': 'end', 'font-size': 12 * big }, svg, 'rank ' + d.rank);
    if (d.parent >= 0) {
      // Receive latency r in the receiver's row.
      svgEl('rect', { x: sx(d.send_start + s), y: y + rowH * 0.2, width: Math.max(0.5, sx(d.time) - sx(d.send_start + s)),
        height: rowH * 0.6, fill: 'var(--recv)' }, svg);
      // The send slot in the sender's row.
      const py = top + rowOf[d.parent] * rowH;
      const slot = svgEl('rect', { x: sx(d.send_start), y: py + rowH * 0.15, width: Math.max(0.5, sx(d.send_start + s) - sx(d.send_start)),
        height: rowH * 0.7, fill: 'var(--send)', stroke: '#fff', 'stroke-width': 0.5 }, svg);
      svgEl('title', {}, slot, `rank ${d.parent} sends to ${d.rank} from ${d.send_label}`);
      if (labels && sx(d.send_start + s) - sx(d.send_start) > 22 * big) {
        svgEl('text', { x: (sx(d.send_start) + sx(d.send_start + s)) / 2, y: py + rowH * 0.7, 'text-anchor': 'middle',
          'font-size': 11 * big, fill: '#fff' }, svg, '→' + d.rank);
      }
    }
    svgEl('circle', { cx: sx(d.time), cy: y + rowH / 2, r: Math.max(1.5, Math.min(5 * big, rowH / 3)), fill: 'var(--fg)' }, svg);
  }
}

function niceStep(raw) {
  if (!(raw > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// A line chart: series of (x, y); `step` draws staircases; `logY` a log scale.
function drawChart(box, spec) {
  clear(box);
  const big = state.big ? 1.25 : 1;
  const width = Math.max(360, box.clientWidth - 10), height = spec.height || 320 * big;
  const m = { l: 66 * big, r: 14, t: 30 * big, b: 46 * big };
  const svg = svgEl('svg', { width, height, role: 'img', 'aria-label': spec.label || 'chart' }, box);
  let xs = [], ys = [];
  for (const s of spec.series) { xs = xs.concat(s.x); ys = ys.concat(s.y.filter((v) => v !== null)); }
  const xMin = spec.xMin !== undefined ? spec.xMin : Math.min(...xs);
  const xMax = spec.xMax !== undefined ? spec.xMax : Math.max(...xs);
  let yMin = spec.yMin !== undefined ? spec.yMin : Math.min(0, ...ys);
  let yMax = spec.yMax !== undefined ? spec.yMax : Math.max(...ys);
  if (spec.logY) { yMin = Math.max(1, Math.min(...ys)); yMax = Math.max(yMin * 10, yMax); }
  if (yMax === yMin) yMax = yMin + 1;
  const xr = xMax === xMin ? 1 : xMax - xMin;
  const sx = (x) => m.l + ((width - m.l - m.r) * (x - xMin)) / xr;
  const ty = spec.logY ? (y) => Math.log10(y) : (y) => y;
  const sy = (y) => {
    const v = (ty(y) - ty(yMin)) / (ty(yMax) - ty(yMin));
    return spec.flipY ? m.t + (height - m.t - m.b) * v : height - m.b - (height - m.t - m.b) * v;
  };
  const ax = svgEl('g', { class: 'axis' }, svg);
  svgEl('line', { x1: m.l, x2: width - m.r, y1: height - m.b, y2: height - m.b }, ax);
  svgEl('line', { x1: m.l, x2: m.l, y1: m.t, y2: height - m.b }, ax);
  const fs = 13 * big;
  const xs1 = niceStep(xr / 8);
  for (let x = Math.ceil(xMin / xs1) * xs1; x <= xMax + 1e-9; x += xs1) {
    svgEl('line', { class: 'grid', x1: sx(x), x2: sx(x), y1: m.t, y2: height - m.b }, svg);
    svgEl('text', { x: sx(x), y: height - m.b + fs + 4, 'text-anchor': 'middle', 'font-size': fs }, svg, show(x));
  }
  if (spec.logY) {
    for (let y = Math.pow(10, Math.floor(Math.log10(yMin))); y <= yMax * 1.0001; y *= 10) {
      if (y < yMin) continue;
      svgEl('line', { class: 'grid', x1: m.l, x2: width - m.r, y1: sy(y), y2: sy(y) }, svg);
      svgEl('text', { x: m.l - 6, y: sy(y) + 4, 'text-anchor': 'end', 'font-size': fs }, svg, y >= 1e6 ? y.toExponential(0) : String(y));
    }
  } else {
    const ys1 = niceStep((yMax - yMin) / 6);
    for (let y = Math.ceil(yMin / ys1) * ys1; y <= yMax + 1e-9; y += ys1) {
      svgEl('line', { class: 'grid', x1: m.l, x2: width - m.r, y1: sy(y), y2: sy(y) }, svg);
      svgEl('text', { x: m.l - 6, y: sy(y) + 4, 'text-anchor': 'end', 'font-size': fs }, svg, show(y));
    }
  }
  svgEl('text', { x: (m.l + width - m.r) / 2, y: height - 6, 'text-anchor': 'middle', 'font-size': fs, class: 'label' }, svg, spec.xLabel || '');
  svgEl('text', { x: 14, y: (m.t + height - m.b) / 2, 'text-anchor': 'middle', 'font-size': fs, class: 'label',
    transform: `rotate(-90 14 ${(m.t + height - m.b) / 2})` }, svg, spec.yLabel || '');
  for (const s of spec.series) {
    if (s.segments) {
      for (let i = 0; i < s.x.length; ++i) {
        svgEl('line', { x1: sx(s.x[i][0]), x2: sx(s.x[i][1]), y1: sy(s.y[i]), y2: sy(s.y[i]), stroke: s.color,
          'stroke-width': s.width || 2 }, svg);
      }
      continue;
    }
    let d = '';
    for (let i = 0; i < s.x.length; ++i) {
      if (s.y[i] === null) continue;
      const X = sx(s.x[i]), Y = sy(s.y[i]);
      if (!d) d = `M${X},${Y}`;
      else if (s.step) d += `H${X}V${Y}`;
      else d += `L${X},${Y}`;
    }
    if (s.lineStyle !== 'none') {
      svgEl('path', { d, fill: 'none', stroke: s.color, 'stroke-width': s.width || 2.5, 'stroke-dasharray': s.dash || '' }, svg);
    }
    if (s.points) {
      for (let i = 0; i < s.x.length; ++i) {
        if (s.y[i] !== null) svgEl('circle', { cx: sx(s.x[i]), cy: sy(s.y[i]), r: s.points, fill: s.color }, svg);
      }
    }
  }
  if (spec.vlines) {
    for (const v of spec.vlines) {
      svgEl('line', { x1: sx(v.x), x2: sx(v.x), y1: sy(v.y0), y2: sy(v.y1), stroke: v.color, 'stroke-width': 2, 'stroke-dasharray': '6 4' }, svg);
    }
  }
  if (spec.hline) {
    svgEl('line', { x1: m.l, x2: width - m.r, y1: sy(spec.hline.y), y2: sy(spec.hline.y), stroke: spec.hline.color, 'stroke-width': 1.5 }, svg);
  }
  // Legend
  let lx = m.l + 10;
  for (const s of spec.series) {
    if (!s.name) continue;
    svgEl('rect', { x: lx, y: 4, width: 14, height: 14, fill: s.color }, svg);
    const t = svgEl('text', { x: lx + 19, y: 16, 'font-size': fs }, svg, s.name);
    lx += 30 + t.getComputedTextLength();
  }
  return svg;
}

function table(box, head, rows, rowClass) {
  clear(box);
  const t = htmlEl('table', {}, box);
  const tr = htmlEl('tr', {}, htmlEl('thead', {}, t));
  for (const h of head) htmlEl('th', { class: h.left ? 'left' : '' }, tr, h.text);
  const tb = htmlEl('tbody', {}, t);
  rows.forEach((r, i) => {
    const row = htmlEl('tr', { class: rowClass ? rowClass(i) : '' }, tb);
    r.forEach((c, j) => htmlEl('td', { class: head[j].left ? 'left' : '' }, row, c));
  });
  return t;
}

// ---- view: trees -----------------------------------------------------------------------------------

const trees = {
  data: null,
  data2: null,
  player: null,
  formToState() {
    const s = state.trees;
    const kind = $('t-kind').value;
    s.shape = kind === 'kary' ? 'kary:' + $('t-k').value : kind === 'hier' && $('t-inner').value.trim()
      ? 'hier:' + $('t-inner').value.trim() : kind;
    s.alpha = kind === 'lambda' && $('t-alpha').value.trim() !== 'auto' ? $('t-alpha').value.trim() : '';
    s.p = $('t-p').value;
    const lam = $('t-model-lambda').checked;
    s.lambda = lam ? $('t-lambda').value.trim() : '';
    s.s = lam ? '' : $('t-s').value.trim();
    s.r = lam ? '' : $('t-r').value.trim();
    s.root = $('t-root').value;
    s.shape2 = $('t-shape2').value;
    s.layers = $('t-layers').value;
  },
  stateToForm() {
    const s = state.trees;
    const [head, arg] = [s.shape.split(':')[0], s.shape.includes(':') ? s.shape.slice(s.shape.indexOf(':') + 1) : ''];
    $('t-kind').value = ['flat', 'binary', 'kary', 'binomial', 'lambda', 'greedy', 'fibo', 'hier'].includes(head) ? head : 'fibo';
    if (head === 'kary') $('t-k').value = arg || '4';
    if (head === 'hier') $('t-inner').value = arg;
    $('t-alpha').value = head === 'lambda' && arg ? arg : s.alpha || 'auto';
    if (head === 'lambda' && arg) { s.shape = 'lambda'; s.alpha = arg; }
    $('t-p').value = s.p;
    $('t-p-range').value = s.p;
    const lam = s.lambda !== '';
    $('t-model-lambda').checked = lam;
    $('t-model-sr').checked = !lam;
    $('t-lambda').value = lam ? s.lambda : '2';
    $('t-lambda-range').value = $('t-lambda').value;
    $('t-s').value = s.s || '1';
    $('t-r').value = s.r || '3';
    $('t-r-range').value = $('t-r').value;
    $('t-root').value = s.root || '0';
    $('t-shape2').value = s.shape2;
    $('t-layers').value = s.layers === 'time' ? 'time' : 'depth';
    this.visibility();
  },
  visibility() {
    const kind = $('t-kind').value;
    for (const e of document.querySelectorAll('.if-kary')) e.classList.toggle('hide', kind !== 'kary');
    for (const e of document.querySelectorAll('.if-lambda')) e.classList.toggle('hide', kind !== 'lambda');
    for (const e of document.querySelectorAll('.if-hier')) e.classList.toggle('hide', kind !== 'hier');
    const lam = $('t-model-lambda').checked;
    for (const e of document.querySelectorAll('#view-trees .if-lam')) e.classList.toggle('hide', !lam);
    for (const e of document.querySelectorAll('#view-trees .if-sr')) e.classList.toggle('hide', lam);
  },
  model() {
    const s = state.trees;
    return s.lambda !== '' ? { lambda: s.lambda } : { s: s.s, r: s.r };
  },
  query() {
    const s = state.trees;
    const q = { shape: s.shape, p: s.p, ...this.model() };
    if (s.alpha) q.alpha = s.alpha;
    if (s.root && s.root !== '0') q.root = s.root;
    return q;
  },
  cli(q) {
    let c = `postbox tree --shape ${q.shape} --p ${q.p}`;
    if (q.lambda !== undefined) c += ` --lambda ${q.lambda}`;
    else c += ` --s ${q.s} --r ${q.r}`;
    if (q.alpha) c += ` --alpha ${q.alpha}`;
    if (q.root) c += ` --root ${q.root}`;
    return c + ' --format json';
  },
  async update() {
    const q = this.query();
    const s = state.trees;
    clearError();
    const [t1, t2, cmp, scl] = await Promise.all([
      api('tree', q, 'tree'),
      s.shape2 ? api('tree', { shape: s.shape2, p: s.p, ...this.model() }, 'tree2') : Promise.resolve(null),
      api('compare', { p: s.p, ...this.model() }, 'compare'),
      api('scaling', { shapes: [s.shape.startsWith('hier') ? '' : s.shape + (s.alpha ? ':' + s.alpha : ''),
        s.shape2 || (s.shape.startsWith('hier') ? 'fibo' : '')].filter(Boolean).join(';'),
        'p-max': String(Math.min(1024, Math.max(16, Number(s.p) || 16))), ...this.model() }, 'scaling'),
    ]);
    if (!t1) return;
    this.data = t1;
    this.data2 = s.shape2 ? t2 : null;
    $('tree-completion').textContent = t1.completion_label;
    $('tree-optimum').textContent = t1.optimum.label;
    $('tree-nodes').textContent = String(t1.nodes.length);
    $('tree-lambda').textContent = t1.lambda_label;
    $('tree-cli').textContent = this.cli(q);
    $('tree-title').textContent = `${t1.shape}, p = ${t1.p}, s = ${t1.s_label}, r = ${t1.r_label}`;
    // One clock for both trees: at its end every node of both is active.
    const end = this.data2 ? Math.max(t1.completion, this.data2.completion) : t1.completion;
    const t = s.t !== '' && Number.isFinite(Number(s.t)) ? Number(s.t) : end;
    this.player.set(end, t, '');
    $('tree2-panel').classList.toggle('hide', !this.data2);
    // Side by side while both fit half the width at 80% size; else one above the other.
    const half = ($('tree-pair').clientWidth - 40) / 2 / 0.8;
    $('tree-pair').classList.toggle('two', !!this.data2 && treeWidth(t1, s.layers) <= half &&
      treeWidth(this.data2, s.layers) <= half);
    if (this.data2) {
      $('tree2-completion').textContent = this.data2.completion_label;
      $('tree2-title').textContent = `${this.data2.shape}, p = ${this.data2.p}`;
    }
    this.cmp = cmp;
    this.scl = scl;
    this.redraw();
  },
  redraw() {
    if (!this.data) return;
    const tNow = this.player.t;
    drawTree($('tree-draw'), this.data, { layers: state.trees.layers, tNow });
    if (this.data2) drawTree($('tree2-draw'), this.data2, { layers: state.trees.layers, tNow });
    drawTimeline($('tree-timeline'), this.data);
    if (this.scl) {
      const colors = ['var(--send)', 'var(--recv)'];
      const series = this.scl.series.map((se, i) => ({ name: se.shape, x: this.scl.p, y: se.completion, color: colors[i % 2] }));
      series.push({ name: 'optimum', x: this.scl.p, y: this.scl.optimum, color: '#555', dash: '5 4', width: 1.5 });
      drawChart($('tree-scaling'), { series, xLabel: 'p (ranks)', yLabel: 'completion', label: 'completion against p' });
    }
    if (this.cmp) {
      table($('tree-compare'), [{ text: 'shape', left: true }, { text: 'completion' }, { text: '/ best' }],
        this.cmp.rows.map((r) => [r.shape, r.label, r.ratio.toFixed(3)]), (i) => (this.cmp.rows[i].best ? 'best' : ''));
    }
  },
  timeChanged(t, settled) {
    state.trees.t = settled && this.data && t < this.player.end ? show(t, 6) : '';
    if (settled) writeUrl();
    if (!this.data) return;
    drawTree($('tree-draw'), this.data, { layers: state.trees.layers, tNow: t });
    if (this.data2) drawTree($('tree2-draw'), this.data2, { layers: state.trees.layers, tNow: t });
  },
  init() {
    this.player = Player('tree-play', 'tree-t', 'tree-t-text', 8, (t, settled) => this.timeChanged(t, settled));
    const changed = debounce(() => { this.formToState(); state.trees.t = ''; writeUrl(); this.update(); }, 150);
    const onForm = () => { this.visibility(); changed(); };
    for (const id of ['t-kind', 't-k', 't-alpha', 't-inner', 't-p', 't-lambda', 't-s', 't-r', 't-root', 't-shape2', 't-layers',
      't-model-lambda', 't-model-sr']) {
      $(id).addEventListener('input', onForm);
      $(id).addEventListener('change', onForm);
    }
    pairSlider('t-p', 't-p-range', onForm);
    pairSlider('t-lambda', 't-lambda-range', onForm);
    pairSlider('t-r', 't-r-range', onForm);
    $('t-alpha-range').addEventListener('input', () => { $('t-alpha').value = $('t-alpha-range').value; onForm(); });
    $('trees-form').addEventListener('submit', (e) => e.preventDefault());
  },
  show() {
    this.stateToForm();
    this.update();
  },
};

// ---- view: the postal model ----------------------------------------------------------------------

const postal = {
  formToState() {
    const s = state.postal;
    s.lambda = $('m-lambda').value.trim();
    s.n = $('m-n').value;
    s.nmax = $('m-nmax').value;
    s.floor = $('m-floor').value;
  },
  stateToForm() {
    const s = state.postal;
    $('m-lambda').value = s.lambda;
    $('m-lambda-range').value = s.lambda;
    $('m-n').value = s.n;
    $('m-n-range').value = s.n;
    $('m-nmax').value = s.nmax;
    $('m-floor').value = s.floor;
  },
  async update() {
    const s = state.postal;
    clearError();
    const [p, a, b, c] = await Promise.all([
      api('postal', { lambda: s.lambda, n: s.n }, 'postal'),
      api('alpha-ranges', { lambda: s.lambda, 'n-max': s.nmax }, 'alpha'),
      api('breakeven', { 'max-floor': s.floor }, 'breakeven'),
      api('combine', { lambda: s.lambda, n: s.n }, 'combine'),
    ]);
    this.p = p; this.a = a; this.b = b; this.c = c;
    if (p) {
      $('postal-T').textContent = p.T.label;
      $('postal-gamma').textContent = p.gamma.toFixed(6);
      $('postal-alpha').textContent = p.range
        ? `[${p.range.alpha_min.toFixed(4)}, ${p.range.alpha_max.toFixed(4)}] (n′ = ${p.range.n_min}…${p.range.n_max})`
        : 'none needed (n = 1)';
      $('postal-scale').textContent = `time quantum: lcm(1, λ) = ${p.scale.u}, f = ${p.scale.f}`;
      $('postal-cli').textContent = `postbox model postal --lambda ${s.lambda} --n ${s.n} --json; ` +
        `postbox model alpha-ranges --lambda ${s.lambda} --n-max ${s.nmax}`;
    }
    if (c) {
      $('combine-variant').textContent = c.variant;
      $('combine-L').textContent = String(c.L);
      $('combine-recv').textContent = c.delay_receive.label;
      $('combine-send').textContent = c.delay_send.label;
      $('combine-rounds').textContent = String(c.rounds);
    }
    this.redraw();
  },
  redraw() {
    const { p, a, b, c } = this;
    if (p) {
      drawChart($('postal-growth'), { series: [{ name: 'N_λ(t)', x: p.N_times, y: p.N, color: 'var(--send)', step: true, points: 3 }],
        xLabel: 't (units of one send)', yLabel: 'nodes reached', logY: p.N[p.N.length - 1] > 200, label: 'N lambda of t',
        hline: { y: p.n, color: 'var(--late)' } });
    }
    if (a) {
      const n = Number(state.postal.n);
      const seg = { name: 'legal α', x: [], y: [], color: 'var(--send)', segments: true, width: 2 };
      const here = { name: n >= 2 && n <= a.n_max ? 'n = ' + n : '', x: [], y: [], color: 'var(--late)', segments: true, width: 5 };
      for (const r of a.ranges) {
        const target = r.n === n ? here : seg;
        target.x.push([r.alpha_min, r.alpha_max]);
        target.y.push(r.n);
      }
      const tops = { name: 'triangle tops', x: a.tops.map((t) => t.alpha), y: a.tops.map((t) => t.n), color: 'var(--reduce)', points: 4,
        lineStyle: 'none' };
      let lo = 2;
      const vlines = a.lookup_table.map((e) => { const v = { x: e.alpha, y0: lo, y1: Math.min(e.n_upper, a.n_max), color: 'var(--copy)' }; lo = e.n_upper; return v; });
      drawChart($('postal-xmas'), { series: [seg, here, tops], vlines, xMin: 0, xMax: 1, yMin: 2, yMax: a.n_max, flipY: true,
        xLabel: 'α = n′ / n', yLabel: 'n', label: 'legal alpha ranges', height: 420 * (state.big ? 1.25 : 1) });
      table($('postal-lut'), [{ text: 'n ≤' }, { text: 'α' }, { text: 'exact', left: true }],
        a.lookup_table.map((e) => [String(e.n_upper), e.alpha.toFixed(6), e.alpha_exact]));
    }
    if (b) {
      const fl = p ? Math.floor(p.lambda.value) : 0;
      table($('postal-breakeven'), [{ text: '⌊λ⌋' }, { text: 'γ(⌊λ⌋)' }, { text: 'break-even λ' }],
        b.rows.map((r) => [String(r.floor), r.gamma.toFixed(4), r.break_even.toFixed(4)]), (i) => (b.rows[i].floor === fl ? 'here' : ''));
    }
    if (c) {
      const rounds = c.N.map((_, i) => i);
      drawChart($('combine-chart'), { series: [{ name: 'inputs combined after round r (N_ε(r))', x: rounds, y: c.N, color: 'var(--reduce)', step: true, points: 3 }],
        xLabel: 'round r', yLabel: 'window length', label: 'combine rounds', height: 260 * (state.big ? 1.25 : 1), hline: { y: c.n, color: 'var(--late)' } });
    }
  },
  init() {
    const changed = debounce(() => { this.formToState(); writeUrl(); this.update(); }, 150);
    for (const id of ['m-lambda', 'm-n', 'm-nmax', 'm-floor']) $(id).addEventListener('input', changed);
    pairSlider('m-lambda', 'm-lambda-range', changed);
    pairSlider('m-n', 'm-n-range', changed);
    $('postal-form').addEventListener('submit', (e) => e.preventDefault());
  },
  show() {
    this.stateToForm();
    this.update();
  },
};

// ---- view: emulated runs -----------------------------------------------------------------------------

const KIND_COLORS = ['#1f5fbf', '#e06c00', '#1d8a3a', '#7b3fb5'];

const sim = {
  machines: null,
  data: null,
  player: null,
  async loadChoices() {
    if (this.machines) return;
    const m = await api('machines', {}, 'machines');
    if (!m) return;
    this.machines = m;
    const sel = $('s-machine');
    clear(sel);
    for (const p of m.profiles) {
      if (p.error) continue;
      htmlEl('option', { value: p.name }, sel, `${p.name} (${p.kind}${p.dims.length ? ' ' + p.dims.join('×') : ''})`);
    }
    htmlEl('option', { value: m.measured }, sel, `this machine, measured (${m.measured})`);
    htmlEl('option', { value: '*' }, sel, 'a model string…');
    const ops = Array.from(new Set(m.algorithms.map((a) => a.op)));
    clear($('s-op'));
    for (const op of ops) htmlEl('option', { value: op }, $('s-op'), op);
  },
  fillAlgos() {
    const op = $('s-op').value;
    const sel = $('s-algo');
    const keep = sel.value;
    clear(sel);
    for (const a of this.machines.algorithms) {
      if (a.op !== op) continue;
      const name = a.algo.replace(/:.*$/, '');
      htmlEl('option', { value: name, title: a.description }, sel, a.algo);
    }
    if (Array.from(sel.options).some((o) => o.value === keep)) sel.value = keep;
  },
  isProfile(name) {
    return this.machines && (this.machines.profiles.some((p) => p.name === name) || name === this.machines.measured);
  },
  profileKind(name) {
    const p = this.machines && this.machines.profiles.find((x) => x.name === name);
    return p ? p.kind : '';
  },
  formToState() {
    const s = state.sim;
    const m = $('s-machine').value;
    s.machine = m === '*' ? $('s-model').value.trim() : m;
    s.op = $('s-op').value;
    s.algo = $('s-algo').value;
    s.p = $('s-p').value;
    s.bytes = $('s-bytes').value;
    const mesh = this.profileKind(s.machine) === 'mesh';
    s.placement = mesh ? $('s-placement').value : '';
    s.seed = mesh && $('s-seed').value !== '1' ? $('s-seed').value : '';
    s.mesh = mesh ? $('s-mesh').value.trim() : '';
    s.lambda = $('s-lambda').value.trim();
    s.alpha = s.algo === 'lambda' ? $('s-alpha').value.trim() : '';
  },
  stateToForm() {
    const s = state.sim;
    if (this.isProfile(s.machine)) {
      $('s-machine').value = s.machine;
    } else {
      $('s-machine').value = '*';
      $('s-model').value = s.machine;
    }
    $('s-op').value = s.op;
    this.fillAlgos();
    $('s-algo').value = s.algo;
    $('s-p').value = s.p;
    $('s-bytes').value = s.bytes;
    $('s-placement').value = s.placement;
    $('s-seed').value = s.seed || '1';
    $('s-mesh').value = s.mesh;
    $('s-lambda').value = s.lambda;
    $('s-alpha').value = s.alpha;
    this.visibility();
  },
  visibility() {
    const m = $('s-machine').value;
    for (const e of document.querySelectorAll('.if-custom')) e.classList.toggle('hide', m !== '*');
    const mesh = this.profileKind(m) === 'mesh';
    for (const e of document.querySelectorAll('.if-mesh')) e.classList.toggle('hide', !mesh);
    for (const e of document.querySelectorAll('.if-salpha')) e.classList.toggle('hide', $('s-algo').value !== 'lambda');
  },
  query() {
    const s = state.sim;
    const q = { machine: s.machine, op: s.op, algo: s.algo, p: s.p, bytes: s.bytes };
    for (const k of ['placement', 'seed', 'mesh', 'lambda', 'alpha']) if (s[k] !== '') q[k] = s[k];
    return q;
  },
  async update() {
    clearError();
    const q = this.query();
    $('sim-trace').href = '/api/trace?' + new URLSearchParams(q).toString();
    $('view-sim').classList.add('busy');
    const d = await api('sim', q, 'sim');
    $('view-sim').classList.remove('busy');
    if (!d) return;
    this.data = d;
    $('sim-time').textContent = d.time_text;
    $('sim-unit').textContent = d.time_unit;
    $('sim-messages').textContent = String(d.messages);
    $('sim-packets').textContent = String(d.packets);
    $('sim-events').textContent = String(d.events);
    $('sim-cli').textContent = d.command;
    $('sim-note').textContent = d.spans_truncated ? 'Only the first 200 000 spans are drawn; the trace has them all.' : '';
    $('sim-mesh-panel').classList.toggle('hide', !d.mesh);
    const t = state.sim.t !== '' && Number.isFinite(Number(state.sim.t)) ? Number(state.sim.t) : d.time_us;
    this.player.set(d.time_us, t, d.time_unit);
    this.redraw();
  },
  redraw() {
    if (!this.data) return;
    this.drawGantt(this.player.t);
    if (this.data.mesh) this.drawMesh(this.player.t);
  },
  drawGantt(tNow) {
    const d = this.data;
    const c = $('sim-gantt');
    const big = state.big ? 1.25 : 1;
    const width = Math.max(600, c.parentElement.clientWidth - 10);
    const rowH = Math.max(2, Math.min(22 * big, 900 / d.p));
    const left = rowH >= 12 ? 70 * big : 30, top = 26 * big;
    c.width = width;
    c.height = top + rowH * d.p + 8;
    const g = c.getContext('2d');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, c.width, c.height);
    const end = Math.max(d.time_us, 1e-9);
    const sx = (t) => left + ((width - left - 12) * t) / end;
    g.font = `${12 * big}px DejaVu Sans, sans-serif`;
    g.fillStyle = '#111';
    g.strokeStyle = '#ddd';
    const step = niceStep(end / 10);
    g.textAlign = 'center';
    for (let t = 0; t <= end + 1e-9; t += step) {
      g.beginPath(); g.moveTo(sx(t), top - 4); g.lineTo(sx(t), c.height); g.stroke();
      g.fillText(show(t), sx(t), top - 8);
    }
    g.textAlign = 'right';
    if (rowH >= 12) for (let r = 0; r < d.p; ++r) g.fillText('rank ' + r, left - 6, top + r * rowH + rowH * 0.7);
    for (const s of d.rank_spans) {
      const [rank, b, e, what] = s;
      g.fillStyle = KIND_COLORS[what] || '#333';
      const active = b <= tNow;
      g.globalAlpha = active ? 1 : 0.25;
      g.fillRect(sx(b), top + rank * rowH + rowH * 0.15, Math.max(1, sx(e) - sx(b)), rowH * 0.7);
    }
    g.globalAlpha = 1;
    g.strokeStyle = '#c5221f';
    g.lineWidth = 2;
    g.beginPath(); g.moveTo(sx(tNow), top - 4); g.lineTo(sx(tNow), c.height); g.stroke();
    g.lineWidth = 1;
  },
  drawMesh(tNow) {
    const d = this.data;
    const mesh = d.mesh;
    const c = $('sim-mesh');
    const dims = mesh.dims;
    const X = dims[dims.length - 1], Y = dims.length > 1 ? dims[dims.length - 2] : 1;
    const tiles = dims.slice(0, Math.max(0, dims.length - 2)).reduce((a, b) => a * b, 1);
    const avail = Math.max(500, c.parentElement.clientWidth - 10);
    const perRow = Math.max(1, Math.min(tiles, Math.floor(avail / (X * 14 + 30))));
    const cell = Math.max(8, Math.min(80, Math.floor((avail - 30 * perRow) / (perRow * X))));
    const tileW = X * cell + 30, tileH = Y * cell + 30;
    c.width = Math.max(200, perRow * tileW);
    c.height = Math.ceil(tiles / perRow) * tileH;
    const g = c.getContext('2d');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, c.width, c.height);
    // Node centre from its row-major index: last dimension X, the one before Y, the rest tiles.
    const centre = (node) => {
      const x = node % X;
      const y = Math.floor(node / X) % Y;
      const tile = Math.floor(node / (X * Y));
      const tx = (tile % perRow) * tileW + 15, ty = Math.floor(tile / perRow) * tileH + 15;
      return [tx + x * cell + cell / 2, ty + y * cell + cell / 2];
    };
    const holds = new Set(mesh.rank_nodes);
    const nodes = X * Y * tiles;
    // The mesh itself, faint: every link between neighbours in x and y.
    g.strokeStyle = '#e4e4e4';
    g.lineWidth = 1;
    for (let n = 0; n < nodes; ++n) {
      const [cx, cy] = centre(n);
      g.beginPath();
      if (n % X !== X - 1) { g.moveTo(cx, cy); g.lineTo(cx + cell, cy); }
      if (Math.floor(n / X) % Y !== Y - 1) { g.moveTo(cx, cy); g.lineTo(cx, cy + cell); }
      g.stroke();
    }
    for (let n = 0; n < nodes; ++n) {
      const [cx, cy] = centre(n);
      g.fillStyle = holds.has(n) ? '#444' : '#ddd';
      const sz = cell * 0.32;
      g.fillRect(cx - sz / 2, cy - sz / 2, sz, sz);
    }
    const busyNow = new Set();
    for (const s of d.link_spans) if (s[1] <= tNow && tNow < s[2]) busyNow.add(s[0]);
    const heat = (f) => {
      const stops = [[242, 242, 242], [255, 213, 79], [245, 124, 0], [183, 28, 28]];
      const x = Math.max(0, Math.min(1, f)) * (stops.length - 1);
      const i = Math.min(stops.length - 2, Math.floor(x)), u = x - i;
      const col = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * u));
      return `rgb(${col[0]},${col[1]},${col[2]})`;
    };
    const axes = 'xyzwvu';
    mesh.links.forEach((l, i) => {
      const [cx, cy] = centre(l.node);
      g.lineWidth = Math.max(3, cell * 0.16);
      if (l.kind !== 'link') {
        // Injection and ejection channels: a ring around the node while one is busy.
        if (!busyNow.has(i)) return;
        g.strokeStyle = '#0b57d0';
        g.lineWidth = 3;
        g.beginPath();
        g.arc(cx, cy, cell * (l.kind === 'inject' ? 0.27 : 0.34), 0, 2 * Math.PI);
        g.stroke();
        return;
      }
      const sign = l.dir[0] === '+' ? 1 : -1;
      const axis = axes.indexOf(l.dir[1]);
      // x along the row, y down the column; deeper axes drawn diagonally (tiles show them).
      const [ux, uy] = axis === 0 ? [1, 0] : axis === 1 ? [0, 1] : [0.7, 0.7];
      const off = sign * cell * 0.1;  // the two directions side by side
      const x0 = cx + ux * cell * 0.2 - uy * off, y0 = cy + uy * cell * 0.2 + ux * off;
      const x1 = cx + ux * sign * cell * 0.8 - uy * off, y1 = cy + uy * sign * cell * 0.8 + ux * off;
      g.strokeStyle = heat(l.occupancy);
      g.beginPath(); g.moveTo(sign > 0 ? x0 : cx - ux * cell * 0.2 - uy * off, sign > 0 ? y0 : cy - uy * cell * 0.2 + ux * off);
      g.lineTo(x1, y1); g.stroke();
      if (busyNow.has(i)) { g.strokeStyle = '#0b57d0'; g.lineWidth = Math.max(2, cell * 0.07); g.stroke(); }
    });
  },
  timeChanged(t, settled) {
    state.sim.t = settled && this.data && t < this.data.time_us ? show(t, 6) : '';
    if (settled) writeUrl();
    this.redraw();
  },
  init() {
    this.player = Player('sim-play', 'sim-t', 'sim-t-text', 10, (t, settled) => this.timeChanged(t, settled));
    const changed = debounce(() => { this.formToState(); state.sim.t = ''; writeUrl(); this.update(); }, 300);
    const onForm = () => { this.visibility(); changed(); };
    $('s-op').addEventListener('change', () => { this.fillAlgos(); onForm(); });
    for (const id of ['s-machine', 's-model', 's-algo', 's-p', 's-bytes', 's-placement', 's-seed', 's-mesh', 's-lambda', 's-alpha']) {
      $(id).addEventListener('change', onForm);
    }
    $('sim-form').addEventListener('submit', (e) => { e.preventDefault(); this.formToState(); state.sim.t = ''; writeUrl(); this.update(); });
  },
  async show() {
    await this.loadChoices();
    if (!this.machines) return;
    this.stateToForm();
    this.update();
  },
};

// ---- view: this machine -------------------------------------------------------------------------------

const machine = {
  cal: null,
  tree: null,
  async load(measure) {
    clearError();
    const [topo, cal] = await Promise.all([
      this.topo ? Promise.resolve(this.topo) : api('topo', {}, 'topo'),
      api('calibration', measure ? { measure: '1' } : {}, 'calibration'),
    ]);
    if (topo) {
      this.topo = topo;
      $('topo-pus').textContent = String(topo.pus);
      $('topo-cores').textContent = String(topo.cores);
      $('topo-packages').textContent = String(topo.packages);
      $('topo-numa').textContent = String(topo.numa_nodes);
      $('topo-tree').textContent = topo.tree.map((n) => '  '.repeat(n.level) + n.kind +
        (n.kind !== 'Machine' ? ' L#' + n.logical_index : '') + (n.first_pu >= 0 && n.kind !== 'PU'
          ? ` (PUs ${n.first_pu}-${n.last_pu})` : '')).join('\n');
    }
    if (!cal) return;
    this.cal = cal;
    $('cal-s').textContent = cal.s_ns.toFixed(1) + ' ns';
    $('cal-r').textContent = cal.r_ns.toFixed(1) + ' ns';
    $('cal-lambda').textContent = cal.lambda.toFixed(2);
    $('cal-bruck').textContent = `${cal.lambda_exp1.toFixed(2)} / ${cal.lambda_exp2.toFixed(2)}`;
    $('cal-source').textContent = cal.source;
    if (state.machine.p === '') $('c-p').value = String(cal.tree_query.p);
    await this.updateTree();
  },
  async updateTree() {
    if (!this.cal) return;
    const tq = this.cal.tree_query;
    const p = $('c-p').value || String(tq.p);
    const q = { shape: 'fibo', p, s: tq.s, r: tq.r };
    const t = await api('tree', q, 'machine-tree');
    if (!t) return;
    this.tree = t;
    $('machine-completion').textContent = t.completion_label;
    $('machine-optimum').textContent = t.optimum.label;
    $('machine-unit').textContent = tq.unit;
    $('machine-unit2').textContent = tq.unit;
    $('machine-cli').textContent = `postbox tree --shape fibo --p ${p} --s ${tq.s} --r ${tq.r}`;
    this.redraw();
  },
  redraw() {
    if (this.tree) drawTree($('machine-draw'), this.tree, { layers: 'depth' });
  },
  init() {
    $('cal-measure').addEventListener('click', () => this.load(true));
    $('c-p').addEventListener('input', debounce(() => { state.machine.p = $('c-p').value; writeUrl(); this.updateTree(); }, 150));
    $('machine-form').addEventListener('submit', (e) => e.preventDefault());
  },
  show() {
    $('c-p').value = state.machine.p;
    this.load(false);
  },
};

const VIEW = { trees, postal, sim, machine };

// ---- start ------------------------------------------------------------------------------------------

for (const v of Object.values(VIEW)) v.init();
window.addEventListener('popstate', () => { readUrl(); applyBig(); selectView(state.view, false); });
window.addEventListener('resize', debounce(() => VIEW[state.view].redraw(), 200));
readUrl();
applyBig();
selectView(state.view, false);
