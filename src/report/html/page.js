// lowalloc HTML report: the page's code. Plain ES2020, no framework, no network.
// It decodes the data element (gzip + base64 JSON, see the format in docs), draws a canvas
// icicle of the call tree, the timeline, the size histogram, the site table and the
// caller/callee view, and offers window.lowalloc for tests and users' scripts.
'use strict';
(() => {
  const METRICS = ['allocations', 'bytes', 'temporary', 'leaked', 'peak'];
  const NM = 5;
  const BYTE_METRIC = [false, true, false, true, true];
  const METRIC_LABEL = ['allocations', 'bytes allocated', 'temporary allocations', 'leaked bytes',
    'live bytes at peak'];
  const ROW_H = 17;
  const MIN_W = 0.5;  // rectangles narrower than this (CSS px) are merged, not drawn

  const $ = (id) => document.getElementById(id);
  let resolveReady, rejectReady;
  const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => {});  // a page without data shows #error; nothing is logged

  // ---- numbers --------------------------------------------------------------------------
  const intFmt = new Intl.NumberFormat('en-US');
  function fmtCount(v) { return intFmt.format(Math.round(v)); }
  function fmtBytes(v) {
    const a = Math.abs(v);
    if (a < 1024) return Math.round(v) + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB'];
    let x = v / 1024, u = 0;
    while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    return (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) + ' ' + units[u];
  }
  function fmtMetric(m, v) { return BYTE_METRIC[m] ? fmtBytes(v) : fmtCount(v); }
  function fmtPct(x) {
    const p = x * 100;
    return (p >= 10 || p === 0 ? p.toFixed(1) : p >= 0.1 ? p.toFixed(2) : p.toPrecision(2)) + '%';
  }
  function fmtSeconds(t) { return t < 10 ? t.toFixed(3) + ' s' : t.toFixed(1) + ' s'; }
  // An axis label of a time axis whose ticks are `step` seconds apart: as many decimals as tell
  // two ticks apart (0.0006 s, 0.0012 s; 2 s, 4 s).
  function fmtTick(t, step) {
    const d = step >= 10 ? 0 : Math.min(9, Math.max(0, Math.ceil(-Math.log10(step))));
    return t.toFixed(d) + ' s';
  }
  // A short count for an axis: 950, 12k, 1.5M, 20M.
  function fmtShort(v) {
    const a = Math.abs(v);
    const [d, u] = a >= 1e9 ? [1e9, 'G'] : a >= 1e6 ? [1e6, 'M'] : a >= 1e3 ? [1e3, 'k'] : [1, ''];
    const x = v / d;
    return (u === '' || Math.abs(x) >= 10 || x === Math.round(x) ? Math.round(x) : x.toFixed(1)) + u;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
  }

  // ---- decoding -------------------------------------------------------------------------
  async function decode() {
    const el = $('lowalloc-data');
    if (!el) throw new Error('the page holds no data element');
    const enc = el.getAttribute('data-encoding');
    const text = el.textContent;
    if (enc === 'json') return JSON.parse(text);
    if (enc !== 'gzip-base64') throw new Error('unknown data encoding "' + enc + '"');
    if (typeof DecompressionStream === 'undefined') throw new Error('this browser has no DecompressionStream');
    let bin;
    try {
      bin = atob(text.replace(/\s+/g, ''));
    } catch (e) {
      throw new Error('its base64 text is not valid');
    }
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    let json;
    try {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      json = await new Response(stream).text();
    } catch (e) {
      throw new Error('its gzip stream is damaged or cut short');
    }
    return JSON.parse(json);
  }

  // ---- the model ------------------------------------------------------------------------
  // The full tree from the data, and derived trees (folded or not) with their values per
  // thread, each computed once and cached.
  let D = null;                 // the decoded JSON
  let fnName = null;            // per frame: its display name
  let frameFlags = null;        // per frame: flags
  let frameRank = null;         // per frame: rank of its name in sorted order
  let frameColor = null;        // per frame: fill colour
  let full = null;              // {n, parent, frame}
  const state = { metric: 0, fold: true, thread: -1, zoom: 0, query: '', selected: null, site: -1 };
  const treeCache = new Map();  // fold -> tree

  function setupFrames() {
    const S = D.strings, F = D.frames, nf = F.length;
    fnName = new Array(nf);
    frameFlags = new Uint8Array(nf);
    for (let f = 0; f < nf; f++) {
      const fr = F[f];
      let name = S[fr[0]] || '';
      if (!name) name = (S[fr[3]] || '??');
      if (f === 0 && !name) name = 'all';
      fnName[f] = name;
      frameFlags[f] = fr[4] | 0;
    }
    const order = new Int32Array(nf);
    for (let f = 0; f < nf; f++) order[f] = f;
    order.sort((a, b) => (fnName[a] < fnName[b] ? -1 : fnName[a] > fnName[b] ? 1 : a - b));
    frameRank = new Int32Array(nf);
    for (let r = 0; r < nf; r++) frameRank[order[r]] = r;
    frameColor = new Array(nf);
    for (let f = 0; f < nf; f++) frameColor[f] = colorOf(f);
  }

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0) / 4294967296;
  }
  // A warm flame palette by frame kind: program code red-orange, folded standard-library and
  // allocator frames amber, inlined frames light orange, C runtime start frames grey.
  function colorOf(f) {
    const r = hash(fnName[f]);
    const fl = frameFlags[f];
    if (f === 0) return 'hsl(20, 10%, 80%)';
    if (fl & 4) return `hsl(30, 8%, ${68 + r * 8}%)`;
    if (fl & 1) return `hsl(${42 + r * 10}, ${78 + r * 10}%, ${58 + r * 8}%)`;
    if (fl & 2) return `hsl(${24 + r * 10}, 90%, ${70 + r * 7}%)`;
    return `hsl(${4 + r * 26}, ${75 + r * 12}%, ${55 + r * 9}%)`;
  }

  function setupFull() {
    const t = D.tree, n = t.parent.length;
    const parent = Int32Array.from(t.parent), frame = Int32Array.from(t.frame);
    const self = Float64Array.from(t.self);
    if (self.length !== n * NM || frame.length !== n) throw new Error('the call tree arrays have different lengths');
    for (let i = 1; i < n; i++) {
      if (parent[i] >= i || parent[i] < 0) throw new Error('call tree node ' + i + ' comes before its parent');
    }
    full = { n, parent, frame, self };
  }

  // The tree shown: folded or not. map[i] = the shown node of full node i.
  function tree(fold) {
    let T = treeCache.get(fold);
    if (T) return T;
    const n = full.n, P = full.parent, Fr = full.frame;
    const map = new Int32Array(n);
    let parent, frame, m;
    if (!fold) {
      for (let i = 0; i < n; i++) map[i] = i;
      parent = P; frame = Fr; m = n;
    } else {
      parent = new Int32Array(n); frame = new Int32Array(n);
      const key = new Map();
      const nf = fnName.length;
      m = 1; parent[0] = 0; frame[0] = Fr[0]; map[0] = 0;
      for (let i = 1; i < n; i++) {
        const np = map[P[i]], f = Fr[i];
        if (frameFlags[f] & 1) { map[i] = np; continue; }
        const k = np * nf + f;
        let id = key.get(k);
        if (id === undefined) { id = m++; parent[id] = np; frame[id] = f; key.set(k, id); }
        map[i] = id;
      }
      parent = parent.subarray(0, m); frame = frame.subarray(0, m);
    }
    // Children lists (CSR), each sorted by frame name: a counting sort by rank, then a stable
    // placement by parent.
    const nf = fnName.length;
    const rankCount = new Int32Array(nf + 1);
    for (let i = 1; i < m; i++) rankCount[frameRank[frame[i]] + 1]++;
    for (let r = 0; r < nf; r++) rankCount[r + 1] += rankCount[r];
    const byRank = new Int32Array(Math.max(0, m - 1));
    for (let i = 1; i < m; i++) byRank[rankCount[frameRank[frame[i]]]++] = i;
    const start = new Int32Array(m + 1);
    for (let i = 1; i < m; i++) start[parent[i] + 1]++;
    for (let i = 0; i < m; i++) start[i + 1] += start[i];
    const fill = start.slice(0, m);
    const kids = new Int32Array(Math.max(0, m - 1));
    for (let j = 0; j < byRank.length; j++) { const c = byRank[j]; kids[fill[parent[c]]++] = c; }
    T = { fold, n: m, parent, frame, map, start, kids, values: new Map() };
    treeCache.set(fold, T);
    return T;
  }

  // Self values of the shown tree for a thread (-1: all): the full tree's self mapped onto it,
  // or the thread's sparse list mapped onto it.
  function selfOf(T, th) {
    const map = T.map, out = new Float64Array(T.n * NM);
    if (th < 0) {
      const src = full.self, n = full.n;
      if (!T.fold) { out.set(src); return out; }
      for (let i = 0; i < n; i++) {
        const a = i * NM, b = map[i] * NM;
        out[b] += src[a]; out[b + 1] += src[a + 1]; out[b + 2] += src[a + 2]; out[b + 3] += src[a + 3]; out[b + 4] += src[a + 4];
      }
      return out;
    }
    const t = D.threads[th].self, nodes = t.nodes, vals = t.values;
    for (let j = 0; j < nodes.length; j++) {
      const a = j * NM, b = map[nodes[j]] * NM;
      out[b] += vals[a]; out[b + 1] += vals[a + 1]; out[b + 2] += vals[a + 2]; out[b + 3] += vals[a + 3]; out[b + 4] += vals[a + 4];
    }
    return out;
  }

  // Inclusive values of the shown tree for a thread: one reverse pass over the parent array
  // (parents come before children), in place over the self values. Cached per thread.
  function valuesOf(T, th) {
    let tot = T.values.get(th);
    if (tot) return tot;
    tot = selfOf(T, th);
    const P = T.parent;
    for (let i = T.n - 1; i > 0; i--) {
      const a = i * NM, b = P[i] * NM;
      tot[b] += tot[a]; tot[b + 1] += tot[a + 1]; tot[b + 2] += tot[a + 2]; tot[b + 3] += tot[a + 3]; tot[b + 4] += tot[a + 4];
    }
    T.values.set(th, tot);
    return tot;
  }
  // A node's self value in metric m: its inclusive value less its children's.
  function selfValue(T, tot, i, m) {
    let v = tot[i * NM + m];
    for (let j = T.start[i], e = T.start[i + 1]; j < e; j++) v -= tot[T.kids[j] * NM + m];
    return v;
  }

  function cur() { const T = tree(state.fold); return { T, tot: valuesOf(T, state.thread) }; }

  // ---- search ---------------------------------------------------------------------------
  let matchFrame = null;  // Uint8Array per frame, or null
  function compileQuery(q) {
    q = q.trim();
    if (!q) return null;
    let test;
    const re = /^\/(.+)\/([i]*)$/.exec(q);
    if (re) {
      try { const r = new RegExp(re[1], re[2]); test = (s) => r.test(s); } catch (e) { test = () => false; }
    } else {
      const lq = q.toLowerCase();
      test = (s) => s.toLowerCase().includes(lq);
    }
    const mf = new Uint8Array(fnName.length);
    for (let f = 1; f < fnName.length; f++) if (test(fnName[f])) mf[f] = 1;
    return mf;
  }
  // Matched nodes with a value in the metric, and the value of the matched subtrees (a match
  // under a match is counted once).
  function searchStats() {
    const { T, tot } = cur();
    const m = state.metric, total = tot[m];
    if (!matchFrame) return { matches: 0, value: 0, share: 0 };
    let matches = 0, value = 0;
    const covered = new Uint8Array(T.n);
    for (let i = 1; i < T.n; i++) {
      const hit = matchFrame[T.frame[i]] === 1;
      const up = covered[T.parent[i]];
      if (hit && tot[i * NM + m] > 0) matches++;
      if (hit && !up) value += tot[i * NM + m];
      covered[i] = up | (hit ? 1 : 0);
    }
    return { matches, value, share: total > 0 ? value / total : 0 };
  }
  function doSearch(text, draw = true) {
    state.query = text;
    matchFrame = compileQuery(text);
    if (draw) drawFlame();
    const r = searchStats();
    const out = $('search-result');
    if (!matchFrame) out.textContent = '';
    else out.textContent = `${fmtCount(r.matches)} matches, ${fmtMetric(state.metric, r.value)} (${fmtPct(r.share)}) of the ${METRIC_LABEL[state.metric]}`;
    return r;
  }

  // ---- the icicle -----------------------------------------------------------------------
  const flame = { canvas: null, ctx: null, w: 0, drawn: 0, rx: null, rw: null, rd: null, rn: null, cnt: 0, charW: 7 };

  function sizeCanvas(canvas, cssW, cssH) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(cssW * dpr)), h = Math.max(1, Math.round(cssH * dpr));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    canvas.style.height = cssH + 'px';
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  function pushRect(x, w, d, node) {
    if (flame.cnt === flame.rx.length) {
      const grow = (a, C) => { const b = new C(a.length * 2); b.set(a); return b; };
      flame.rx = grow(flame.rx, Float64Array); flame.rw = grow(flame.rw, Float64Array);
      flame.rd = grow(flame.rd, Int32Array); flame.rn = grow(flame.rn, Int32Array);
    }
    const c = flame.cnt++;
    flame.rx[c] = x; flame.rw[c] = w; flame.rd[c] = d; flame.rn[c] = node;
  }

  // Lays out the visible rectangles: the zoomed node's ancestors at full width, the zoomed
  // node and its subtree scaled to the width; node -1 is a merged run of narrow children.
  function layout(T, tot, m, W) {
    if (!flame.rx) { flame.rx = new Float64Array(4096); flame.rw = new Float64Array(4096); flame.rd = new Int32Array(4096); flame.rn = new Int32Array(4096); }
    flame.cnt = 0;
    let z = state.zoom;
    if (z >= T.n || tot[z * NM + m] <= 0) z = 0;
    const chain = [];
    for (let a = z; a !== 0; a = T.parent[a]) chain.push(a);
    chain.push(0);
    chain.reverse();
    // deep in the tree, the root and the closest 11 callers stand for all the callers
    if (chain.length > 13) chain.splice(1, chain.length - 13);
    flame.zoomRow = chain.length - 1;
    for (let d = 0; d < chain.length - 1; d++) pushRect(0, W, d, chain[d]);
    const zv = tot[z * NM + m];
    if (zv <= 0) { pushRect(0, W, chain.length - 1, z); return chain.length; }
    const scale = W / zv;
    let maxD = chain.length;
    // iterative depth-first walk
    const stackN = [z], stackX = [0], stackD = [chain.length - 1];
    const K = T.kids, S = T.start;
    while (stackN.length) {
      const node = stackN.pop(), x = stackX.pop(), d = stackD.pop();
      const w = tot[node * NM + m] * scale;
      pushRect(x, w, d, node);
      if (d + 1 > maxD) maxD = d + 1;
      let cx = x, mergedX = -1, mergedW = 0;
      for (let j = S[node], e = S[node + 1]; j < e; j++) {
        const c = K[j];
        const cw = tot[c * NM + m] * scale;
        if (cw <= 0) continue;
        if (cw < MIN_W) {
          if (mergedX < 0) mergedX = cx;
          mergedW += cw;
        } else {
          if (mergedW >= MIN_W) pushRect(mergedX, mergedW, d + 1, -1);
          mergedX = -1; mergedW = 0;
          stackN.push(c); stackX.push(cx); stackD.push(d + 1);
        }
        cx += cw;
      }
      if (mergedW >= MIN_W) { pushRect(mergedX, mergedW, d + 1, -1); if (d + 2 > maxD) maxD = d + 2; }
    }
    return maxD;
  }

  function drawFlame() {
    const canvas = flame.canvas;
    const W = canvas.parentElement.clientWidth || 1200;
    const { T, tot } = cur();
    const m = state.metric;
    const depth = layout(T, tot, m, W);
    // a canvas taller than about 16k device pixels stays blank in some browsers
    const maxRows = Math.floor(16000 / (ROW_H * (window.devicePixelRatio || 1)));
    const rows = Math.min(Math.max(depth, 1), maxRows);
    $('flame-deep').textContent = depth > maxRows ? `Frames deeper than ${maxRows} levels are not drawn: click a frame to zoom in.` : '';
    const H = rows * ROW_H + 2;
    const ctx = sizeCanvas(canvas, W, H);
    flame.ctx = ctx; flame.w = W; flame.T = T; flame.tot = tot;
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11.5px system-ui, "DejaVu Sans", sans-serif';
    ctx.textBaseline = 'middle';
    if (!flame.charWSet) { flame.charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz_:<>').width / 30; flame.charWSet = true; }
    const cw = flame.charW;
    const zoomDepth = flame.zoomRow;
    const sel = state.selected;
    let drawn = 0;
    for (let i = 0; i < flame.cnt; i++) {
      const x = flame.rx[i], w = flame.rw[i], d = flame.rd[i], node = flame.rn[i];
      if (d >= rows) continue;
      const y = d * ROW_H;
      if (node < 0) {
        ctx.fillStyle = 'hsl(30, 20%, 82%)';
        ctx.fillRect(x, y, Math.max(w, MIN_W), ROW_H - 1);
        continue;
      }
      drawn++;
      const f = T.frame[node];
      const hit = matchFrame !== null && matchFrame[f] === 1;
      ctx.fillStyle = hit ? '#b73cd6' : frameColor[f];
      if (d < zoomDepth) ctx.globalAlpha = 0.55;
      ctx.fillRect(x, y, w > 1.5 ? w - 0.5 : w, ROW_H - 1);
      ctx.globalAlpha = 1;
      if (sel !== null && fnName[f] === sel && w > 2) {
        ctx.strokeStyle = '#1f2328'; ctx.lineWidth = 1.5;
        ctx.strokeRect(x + 0.75, y + 0.75, w - 2, ROW_H - 2.5);
      }
      if (w > 28) {
        const label = node === 0 ? 'all: ' + fmtMetric(m, tot[m]) + ' ' + METRIC_LABEL[m] : fnName[f];
        const chars = Math.floor((w - 8) / cw);
        if (chars >= 3) {
          ctx.fillStyle = hit ? '#fff' : '#1b1b1b';
          ctx.fillText(label.length > chars ? label.slice(0, chars - 1) + '\u2026' : label, x + 4, y + ROW_H / 2);
        }
      }
    }
    flame.drawn = drawn;
    flame.H = H;
  }

  function hitTest(px, py) {
    const d = Math.floor(py / ROW_H);
    for (let i = 0; i < flame.cnt; i++) {
      if (flame.rd[i] === d && flame.rn[i] >= 0 && px >= flame.rx[i] && px < flame.rx[i] + flame.rw[i]) return flame.rn[i];
    }
    return -1;
  }

  function frameLocation(f) {
    const fr = D.frames[f], S = D.strings;
    let loc = S[fr[1]] || '';
    if (loc && fr[2]) loc += ':' + fr[2];
    const mod = S[fr[3]] || '';
    if (!loc) loc = mod;
    else if (mod) loc += '  (' + mod.split('/').pop() + ')';
    return loc;
  }

  function showTooltip(node, ev) {
    const tip = $('tooltip');
    if (node < 0) { tip.hidden = true; return; }
    const T = flame.T, tot = flame.tot, m = state.metric, f = T.frame[node];
    const v = tot[node * NM + m], all = tot[m], pv = node === 0 ? v : tot[T.parent[node] * NM + m];
    const kinds = [];
    if (frameFlags[f] & 1) kinds.push('folded standard-library frame');
    if (frameFlags[f] & 2) kinds.push('inlined');
    if (frameFlags[f] & 4) kinds.push('C runtime start');
    let rows = '';
    for (let k = 0; k < NM; k++) {
      rows += `<tr${k === m ? ' class="cur"' : ''}><td>${METRIC_LABEL[k]}</td><td class="num">${esc(fmtMetric(k, tot[node * NM + k]))}</td></tr>`;
    }
    tip.innerHTML = `<div class="fn">${esc(node === 0 ? 'all' : fnName[f])}</div>` +
      (node === 0 ? '' : `<div class="loc">${esc(frameLocation(f) || 'unknown location')}${kinds.length ? ' \u00b7 ' + kinds.join(', ') : ''}</div>`) +
      `<table>${rows}</table>` +
      `<div>${fmtPct(all > 0 ? v / all : 0)} of total, ${fmtPct(pv > 0 ? v / pv : 0)} of parent</div>`;
    tip.hidden = false;
    const wrap = flame.canvas.parentElement.getBoundingClientRect();
    let x = ev.clientX - wrap.left + 14, y = ev.clientY - wrap.top + 14;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    if (x + tw > wrap.width) x = Math.max(0, ev.clientX - wrap.left - tw - 10);
    if (y + th > wrap.height && y - th - 24 > 0) y = y - th - 24;
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }

  function zoomTo(node) {
    state.zoom = node;
    drawFlame();
  }

  // The node in the other tree (fold toggled) that shows the same frame path as node.
  function translateZoom(Told, Tnew, node) {
    if (node === 0) return 0;
    const path = [];
    for (let a = node; a !== 0; a = Told.parent[a]) path.push(Told.frame[a]);
    path.reverse();
    let cur = 0;
    for (const f of path) {
      if (Tnew.fold && (frameFlags[f] & 1)) continue;
      let next = -1;
      for (let j = Tnew.start[cur]; j < Tnew.start[cur + 1]; j++) if (Tnew.frame[Tnew.kids[j]] === f) { next = Tnew.kids[j]; break; }
      if (next < 0) break;
      cur = next;
    }
    return cur;
  }

  function setupFlame() {
    const canvas = $('flame-canvas');
    flame.canvas = canvas;
    canvas.addEventListener('mousemove', (ev) => {
      const r = canvas.getBoundingClientRect();
      showTooltip(hitTest(ev.clientX - r.left, ev.clientY - r.top), ev);
    });
    canvas.addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
    canvas.addEventListener('click', (ev) => {
      const r = canvas.getBoundingClientRect();
      const node = hitTest(ev.clientX - r.left, ev.clientY - r.top);
      if (node < 0) return;
      if (ev.shiftKey) { select(fnName[flame.T.frame[node]]); return; }
      zoomTo(node === state.zoom && node !== 0 ? flame.T.parent[node] : node);
    });
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') { if (document.activeElement === $('search') && state.query) return; zoomTo(0); }
    });
    $('reset-zoom').addEventListener('click', () => zoomTo(0));
    $('metric').addEventListener('change', (ev) => setMetric(ev.target.value));
    $('fold').addEventListener('change', (ev) => setFold(ev.target.checked));
    $('thread').addEventListener('change', (ev) => setThread(Number(ev.target.value)));
    let pending = 0;
    $('search').addEventListener('input', (ev) => {
      clearTimeout(pending);
      const v = ev.target.value;
      pending = setTimeout(() => doSearch(v), 60);
    });
    $('search').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        clearTimeout(pending);
        doSearch(ev.target.value);
        const best = bestMatch();
        if (best) select(best);
      }
    });
    let resizeQueued = false;
    window.addEventListener('resize', () => {
      if (resizeQueued) return;
      resizeQueued = true;
      requestAnimationFrame(() => { resizeQueued = false; drawFlame(); drawTimeline(); });
    });
  }

  // The matched function with the largest value in the metric.
  function bestMatch() {
    if (!matchFrame) return null;
    const { T, tot } = cur();
    const m = state.metric, byName = new Map();
    for (let i = 1; i < T.n; i++) {
      const f = T.frame[i];
      if (matchFrame[f]) byName.set(fnName[f], (byName.get(fnName[f]) || 0) + tot[i * NM + m]);
    }
    let best = null, bv = -1;
    for (const [k, v] of byName) if (v > bv) { best = k; bv = v; }
    return best;
  }

  // ---- the timeline ---------------------------------------------------------------------
  const tl = { canvas: null, geo: null };
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const k of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (k * p >= v) return k * p;
    return 10 * p;
  }
  function drawTimeline() {
    const canvas = tl.canvas, TL = D.timeline || {};
    const t = TL.t || [], live = TL.live || [], rate = TL.allocs_per_s || [];
    const liveMax = TL.live_max || live;
    const W = canvas.parentElement.clientWidth || 800, H = 260;
    const ctx = sizeCanvas(canvas, W, H);
    ctx.clearRect(0, 0, W, H);
    const L = 64, R = 64, Tp = 16, B = 28;
    const pw = W - L - R, ph = H - Tp - B;
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    if (t.length === 0) {
      ctx.fillStyle = '#5f6670'; ctx.textBaseline = 'middle';
      ctx.fillText('The trace holds no timeline.', L, H / 2);
      tl.geo = null;
      return;
    }
    const t0 = Math.min(0, t[0]), t1 = Math.max(t[t.length - 1], t0 + 1e-9);
    let lmax = 0, rmax = 0;
    for (let i = 0; i < t.length; i++) { if (liveMax[i] > lmax) lmax = liveMax[i]; if (rate[i] > rmax) rmax = rate[i]; }
    const pk = TL.peak || null;
    if (pk && pk.bytes > lmax) lmax = pk.bytes;
    lmax = niceMax(lmax * 1.08); rmax = niceMax(rmax * 1.05);
    const X = (v) => L + (v - t0) / (t1 - t0) * pw;
    const YL = (v) => Tp + ph - v / lmax * ph;
    const YR = (v) => Tp + ph - v / rmax * ph;
    // grid and axes
    ctx.strokeStyle = '#ece9e3'; ctx.lineWidth = 1; ctx.fillStyle = '#5f6670';
    ctx.textBaseline = 'middle';
    for (let k = 0; k <= 4; k++) {
      const y = Math.round(Tp + ph - k / 4 * ph) + 0.5;
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(L + pw, y); ctx.stroke();
      ctx.textAlign = 'right'; ctx.fillStyle = '#c2410c'; ctx.fillText(fmtBytes(lmax * k / 4), L - 6, y);
      ctx.textAlign = 'left'; ctx.fillStyle = '#1c7ed6'; ctx.fillText(fmtShort(rmax * k / 4) + '/s', L + pw + 6, y);
    }
    ctx.textAlign = 'center'; ctx.textBaseline = 'top'; ctx.fillStyle = '#5f6670';
    for (let k = 0; k <= 5; k++) {
      const v = t0 + (t1 - t0) * k / 5;
      ctx.fillText(fmtTick(v, (t1 - t0) / 5), X(v), Tp + ph + 7);
    }
    // live bytes: the area of the maxima, the line at the interval ends
    ctx.beginPath();
    ctx.moveTo(X(t[0]), YL(0));
    for (let i = 0; i < t.length; i++) ctx.lineTo(X(t[i]), YL(liveMax[i]));
    ctx.lineTo(X(t[t.length - 1]), YL(0));
    ctx.closePath();
    const grad = ctx.createLinearGradient(0, Tp, 0, Tp + ph);
    grad.addColorStop(0, 'rgba(232, 89, 12, 0.45)'); grad.addColorStop(1, 'rgba(232, 89, 12, 0.08)');
    ctx.fillStyle = grad; ctx.fill();
    ctx.beginPath();
    for (let i = 0; i < t.length; i++) { const x = X(t[i]), y = YL(live[i]); if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y); }
    ctx.strokeStyle = '#e8590c'; ctx.lineWidth = 1.6; ctx.stroke();
    // allocations per second
    ctx.beginPath();
    for (let i = 0; i < t.length; i++) { const x = X(t[i]), y = YR(rate[i] || 0); if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y); }
    ctx.strokeStyle = 'rgba(28, 126, 214, 0.85)'; ctx.lineWidth = 1.2; ctx.stroke();
    // the peak
    if (pk && pk.bytes > 0) {
      const x = X(pk.t), y = YL(pk.bytes);
      ctx.setLineDash([4, 3]); ctx.strokeStyle = '#1f2328'; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, Tp); ctx.lineTo(x, Tp + ph); ctx.stroke(); ctx.setLineDash([]);
      ctx.beginPath(); ctx.arc(x, y, 4, 0, Math.PI * 2); ctx.fillStyle = '#1f2328'; ctx.fill();
      const label = 'peak ' + fmtBytes(pk.bytes) + ' at ' + fmtSeconds(pk.t);
      ctx.font = '600 11.5px system-ui, "DejaVu Sans", sans-serif';
      const lw = ctx.measureText(label).width;
      const lx = x + 8 + lw > L + pw ? x - 8 - lw : x + 8;
      ctx.textAlign = 'left'; ctx.textBaseline = 'middle';
      ctx.fillStyle = 'rgba(255,255,255,0.85)'; ctx.fillRect(lx - 3, Tp + 2, lw + 6, 16);
      ctx.fillStyle = '#1f2328'; ctx.fillText(label, lx, Tp + 10);
      $('timeline-note').textContent = 'Peak: ' + fmtBytes(pk.bytes) + ' live at ' + fmtSeconds(pk.t) + '.';
    }
    tl.geo = { X, L, pw, t0, t1 };
  }
  function setupTimeline() {
    tl.canvas = $('timeline-canvas');
    const tip = $('timeline-tip');
    tl.canvas.addEventListener('mousemove', (ev) => {
      const g = tl.geo, TL = D.timeline;
      if (!g) return;
      const r = tl.canvas.getBoundingClientRect();
      const px = ev.clientX - r.left;
      const tv = g.t0 + (px - g.L) / g.pw * (g.t1 - g.t0);
      const t = TL.t;
      let lo = 0, hi = t.length - 1;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (t[mid] < tv) lo = mid + 1; else hi = mid; }
      if (px < g.L || px > g.L + g.pw) { tip.hidden = true; return; }
      const lm = TL.live_max ? ' (max ' + fmtBytes(TL.live_max[lo]) + ')' : '';
      tip.innerHTML = `${esc(fmtSeconds(t[lo]))}<br>live ${esc(fmtBytes(TL.live[lo]))}${esc(lm)}<br>${esc(fmtCount((TL.allocs_per_s || [])[lo] || 0))} allocations/s`;
      tip.hidden = false;
      const x = px + 12 + 200 > r.width ? px - 190 : px + 12;
      tip.style.left = x + 'px'; tip.style.top = (ev.clientY - r.top + 10) + 'px';
    });
    tl.canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  }

  // ---- sizes ----------------------------------------------------------------------------
  // The data's buckets are exact sizes ("24") and ranges ("4097..8192"); the chart groups them
  // by powers of two (1-8, 9-16, 17-32, ...). Labels of another form are shown as they are.
  function sizeBound(label) {
    const m = /^\s*(\d+)\s*(?:(?:\.\.|-)\s*(\d+))?\s*$/.exec(String(label));
    return m ? Number(m[2] !== undefined ? m[2] : m[1]) : -1;
  }
  function pow2Label(k) {
    const kb = (v) => (v >= 1048576 && v % 1048576 === 0 ? v / 1048576 + 'M' : v >= 1024 && v % 1024 === 0 ? v / 1024 + 'K' : String(v));
    const lo = 2 ** (k - 1);
    return k <= 3 ? '1-8' : (lo >= 1024 ? kb(lo) : String(lo + 1)) + '-' + kb(2 ** k);
  }
  function groupSizes(rows) {
    const bounds = rows.map((r) => sizeBound(r[0]));
    if (bounds.some((b) => b < 0)) return rows;
    const by = new Map();
    for (let i = 0; i < rows.length; i++) {
      const k = Math.max(3, Math.ceil(Math.log2(Math.max(1, bounds[i]))));
      by.set(k, (by.get(k) || 0) + rows[i][1]);
    }
    return [...by.keys()].sort((a, b) => a - b).map((k) => [pow2Label(k), by.get(k)]);
  }
  function drawSizes(site) {
    const s = site >= 0 ? D.sites[site] : null;
    const rows = groupSizes((s ? s.sizes : D.sizes) || []);
    $('sizes-title').textContent = s ? 'site: ' + s.function + (s.file ? ' (' + s.file.split('/').pop() + ':' + s.line + ')' : '') : 'all allocations';
    let max = 0, sum = 0;
    for (const r of rows) { if (r[1] > max) max = r[1]; sum += r[1]; }
    let html = '';
    for (const r of rows) {
      const pct = max > 0 ? r[1] / max * 100 : 0;
      html += `<span class="lbl">${esc(r[0])}</span><div class="bar" style="width:${pct.toFixed(2)}%" title="${esc(fmtPct(sum > 0 ? r[1] / sum : 0))}"></div><span class="cnt">${esc(fmtCount(r[1]))}</span>`;
    }
    if (!rows.length) html = '<span class="lbl"></span><span>no allocations</span><span></span>';
    $('sizes-chart').innerHTML = html;
  }

  // ---- the site table -------------------------------------------------------------------
  const SITE_COLS = [
    { key: 'function', label: 'site', num: false },
    { key: 'allocations', label: 'allocations', num: true, fmt: fmtCount },
    { key: 'bytes', label: 'bytes', num: true, fmt: fmtBytes },
    { key: 'temporary', label: 'temporary', num: true, fmt: fmtCount },
    { key: 'leaked_bytes', label: 'leaked', num: true, fmt: fmtBytes },
    { key: 'peak_bytes', label: 'at peak', num: true, fmt: fmtBytes },
    { key: 'max_live_bytes', label: 'max live', num: true, fmt: fmtBytes },
    { key: 'advice', label: 'advice', num: false },
  ];
  const COL_ALIAS = { site: 'function', leaked: 'leaked_bytes', peak: 'peak_bytes', max_live: 'max_live_bytes' };
  let siteOrder = [];
  const siteSort = { key: 'allocations', desc: true };

  function setupSites() {
    const head = $('sites-table').tHead.rows[0];
    head.innerHTML = SITE_COLS.map((c) => `<th scope="col" class="${c.num ? 'num' : ''}" data-key="${c.key}"><button type="button">${esc(c.label)}</button></th>`).join('');
    head.addEventListener('click', (ev) => {
      const th = ev.target.closest('th');
      if (!th) return;
      const k = th.dataset.key;
      const col = SITE_COLS.find((c) => c.key === k);
      sortSites(k, siteSort.key === k ? !siteSort.desc : col.num);
    });
    $('sites-table').tBodies[0].addEventListener('click', (ev) => {
      const tr = ev.target.closest('tr');
      if (tr) selectSite(Number(tr.dataset.site));
    });
    sortSites('allocations', true);
  }

  function sortSites(column, descending) {
    const key = COL_ALIAS[column] || column;
    const col = SITE_COLS.find((c) => c.key === key);
    if (!col) throw new Error('no site column "' + column + '"');
    const desc = descending === undefined ? col.num : !!descending;
    siteSort.key = key; siteSort.desc = desc;
    const sites = D.sites || [];
    siteOrder = sites.map((_, i) => i);
    const sign = desc ? -1 : 1;
    siteOrder.sort((a, b) => {
      const va = sites[a][key], vb = sites[b][key];
      const c = col.num ? (va - vb) : String(va || '').localeCompare(String(vb || ''));
      return c !== 0 ? sign * c : a - b;
    });
    for (const th of $('sites-table').tHead.rows[0].cells) {
      if (th.dataset.key === key) th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    }
    renderSites();
    return siteOrder.length ? sites[siteOrder[0]].function : null;
  }

  function renderSites() {
    const sites = D.sites || [];
    const parts = [];
    for (const i of siteOrder) {
      const s = sites[i];
      let cells = '';
      for (const c of SITE_COLS) {
        if (c.key === 'function') {
          const loc = s.file ? s.file + (s.line ? ':' + s.line : '') : '';
          cells += `<td class="fn">${esc(s.function)}${loc ? '<small>' + esc(loc) + '</small>' : ''}${s.op ? '<small>' + esc(s.op) + '</small>' : ''}</td>`;
        } else if (c.key === 'advice') {
          cells += `<td class="advice">${esc(s.advice || '')}</td>`;
        } else {
          cells += `<td class="num">${esc(c.fmt(s[c.key] || 0))}</td>`;
        }
      }
      parts.push(`<tr data-site="${i}"${i === state.site ? ' class="selected"' : ''}>${cells}</tr>`);
    }
    $('sites-table').tBodies[0].innerHTML = parts.join('');
  }

  function selectSite(i) {
    state.site = i;
    for (const tr of $('sites-table').tBodies[0].rows) tr.classList.toggle('selected', Number(tr.dataset.site) === i);
    drawSizes(i);
    if (i >= 0) select(D.sites[i].function);
  }

  // ---- callers and callees --------------------------------------------------------------
  function select(name, draw = true) {
    state.selected = name;
    const { T, tot } = cur();
    const m = state.metric;
    const callers = new Map(), callees = new Map();
    let selfV = 0, selfA = 0, totalV = 0, totalA = 0, found = 0;
    const isF = (f) => fnName[f] === name;
    // Every call edge is listed (in recursion a row can hold a value again); the total counts
    // a node of the function under another node of it once, in the outer one.
    const inside = new Uint8Array(T.n);
    const add = (map, k, v, a) => { const e = map.get(k); if (e) { e[0] += v; e[1] += a; } else map.set(k, [v, a]); };
    for (let i = 1; i < T.n; i++) {
      const hit = isF(T.frame[i]);
      const up = inside[T.parent[i]];
      inside[i] = up | (hit ? 1 : 0);
      if (!hit) continue;
      found++;
      selfV += selfValue(T, tot, i, m); selfA += selfValue(T, tot, i, 0);
      const v = tot[i * NM + m], a = tot[i * NM];
      if (!up) { totalV += v; totalA += a; }
      const p = T.parent[i];
      add(callers, p === 0 ? '(top of the stack)' : fnName[T.frame[p]], v, a);
    }
    for (let i = 1; i < T.n; i++) {
      if (!isF(T.frame[i])) continue;
      for (let j = T.start[i]; j < T.start[i + 1]; j++) {
        const c = T.kids[j];
        add(callees, fnName[T.frame[c]], tot[c * NM + m], tot[c * NM]);
      }
    }
    const title = $('callers-title');
    if (!found) title.textContent = 'No frame of ' + name + ' in this view.';
    else title.innerHTML = `<b>${esc(name)}</b>: ${esc(fmtMetric(m, totalV))} ${esc(METRIC_LABEL[m])} in total (${esc(fmtPct(tot[m] > 0 ? totalV / tot[m] : 0))}), ${esc(fmtMetric(m, selfV))} in itself, ${esc(fmtCount(totalA))} allocations.`;
    const rowsOf = (map, extra) => {
      const arr = [...map].sort((a, b) => b[1][0] - a[1][0] || b[1][1] - a[1][1]);
      if (extra) arr.push(extra);
      return arr.map(([k, [v, a]]) => `<tr data-fn="${esc(k)}"><td class="fn">${esc(k)}</td><td class="num">${esc(fmtMetric(m, v))}</td><td class="num">${esc(fmtCount(a))}</td></tr>`).join('');
    };
    for (const th of document.querySelectorAll('#callers .metric-name')) th.textContent = METRIC_LABEL[m];
    $('callers-table').tBodies[0].innerHTML = rowsOf(callers);
    $('callees-table').tBodies[0].innerHTML = rowsOf(callees, found && (selfV > 0 || selfA > 0) ? ['(itself)', [selfV, selfA]] : null);
    if (draw && flame.canvas) drawFlame();
    return { callers: callers.size, callees: callees.size };
  }
  function setupCallers() {
    for (const id of ['callers-table', 'callees-table']) {
      $(id).tBodies[0].addEventListener('click', (ev) => {
        const tr = ev.target.closest('tr');
        const fn = tr && tr.dataset.fn;
        if (fn && fn[0] !== '(') select(fn);
      });
    }
  }

  // Sites name their function, file and operation by string or by index into strings.
  function normalizeSites() {
    const S = D.strings || [];
    const str = (v) => (typeof v === 'number' ? (S[v] || '') : (v || ''));
    for (const s of D.sites || []) {
      s.function = str(s.function) || '??';
      s.file = str(s.file);
      s.op = str(s.op);
      s.advice = str(s.advice);
    }
  }

  // ---- summary --------------------------------------------------------------------------
  function setupSummary() {
    const tt = D.totals || {};
    document.title = D.title || 'lowalloc report';
    $('title').textContent = D.title || 'lowalloc report';
    let cmd = D.command || '';
    const pr = D.process;
    if (pr) {
      const bits = [];
      if (pr.pid) bits.push('pid ' + pr.pid);
      if (pr.fork_child) bits.push('fork child');
      if (pr.exec_child) bits.push('exec child');
      if (bits.length) cmd += (cmd ? '  \u00b7  ' : '') + bits.join(', ');
    }
    $('command').textContent = cmd;
    const cards = [
      [fmtCount(tt.allocations || 0), 'allocations'],
      [fmtBytes(tt.bytes || 0), 'allocated'],
      [fmtCount(tt.temporary || 0), 'temporary'],
      [fmtBytes(tt.peak_bytes || 0), 'peak live'],
      [fmtBytes(tt.leaked_bytes || 0), 'leaked (' + fmtCount(tt.leaked_allocations || 0) + ' blocks)'],
      [fmtCount(tt.frees || 0), 'frees'],
      [(tt.run_time_seconds || 0).toFixed(2) + ' s', 'run time'],
      [fmtCount(tt.threads || 1), tt.threads === 1 ? 'thread' : 'threads'],
    ];
    $('totals').innerHTML = cards.map(([v, l]) => `<div class="card"><b>${esc(v)}</b><span>${esc(l)}</span></div>`).join('');
    $('summary-text').textContent = D.summary_text || '';
    const notes = D.notes || [];
    if (notes.length) {
      $('notes').innerHTML = notes.map((n) => `<li>${esc(n)}</li>`).join('');
      $('notes').hidden = false;
    }
    const pruned = D.pruned;
    if (pruned && pruned.nodes > 0) {
      $('pruned').textContent = `${fmtCount(pruned.nodes)} call-tree nodes under ${Number((pruned.share * 100).toPrecision(3))}% of every metric are merged into their callers.`;
    }
    const threads = D.threads || [];
    if (threads.length) {
      const sel = $('thread');
      for (let i = 0; i < threads.length; i++) {
        const t = threads[i];
        const o = document.createElement('option');
        o.value = String(i);
        o.textContent = `thread ${t.index}${t.tid ? ' (tid ' + t.tid + ')' : ''}: ${fmtCount(t.allocations || 0)} allocations`;
        sel.appendChild(o);
      }
      $('thread-label').hidden = false;
    }
  }

  // ---- the API --------------------------------------------------------------------------
  function setMetric(name) {
    const m = METRICS.indexOf(name);
    if (m < 0) throw new Error('no metric "' + name + '"');
    state.metric = m;
    $('metric').value = name;
    refresh();
  }
  function setFold(on) {
    on = !!on;
    if (on === state.fold) return;
    const Told = tree(state.fold);
    state.fold = on;
    $('fold').checked = on;
    state.zoom = translateZoom(Told, tree(on), state.zoom);
    refresh();
  }
  function setThread(i) {
    i = Number(i);
    const nt = (D.threads || []).length;
    if (!(i >= -1 && i < nt)) throw new Error('no thread ' + i);
    state.thread = i;
    $('thread').value = String(i);
    refresh();
  }
  // Redraws what depends on the metric, the fold and the thread.
  function refresh() {
    if (matchFrame) doSearch(state.query, false);
    if (state.selected !== null) select(state.selected, false);
    drawFlame();
  }
  function search(text) {
    $('search').value = text;
    return doSearch(String(text));
  }
  function stats() {
    let nonBlank = false;
    const c = flame.canvas;
    if (c && c.width && c.height) {
      const px = c.getContext('2d').getImageData(0, 0, c.width, Math.min(c.height, 4 * ROW_H * (window.devicePixelRatio || 1))).data;
      for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) { nonBlank = true; break; }
    }
    return { nodesDrawn: flame.drawn, canvasPixelsNonBlank: nonBlank };
  }

  const api = {
    ready, data: null,
    setMetric, search, setFold, setThread, select, sortSites, stats,
  };
  window.lowalloc = api;

  function fail(err) {
    const box = $('error');
    const why = String(err && err.message ? err.message : err).replace(/\.$/, '');
    box.textContent = "lowalloc: the report's data cannot be decoded: " + why + '.';
    box.hidden = false;
    $('main').hidden = true;
    rejectReady(err);
  }

  async function start() {
    try {
      D = await decode();
      if (!D || D.version !== 1) throw new Error('the data is not version 1 of the lowalloc report format');
      if (!D.tree || !D.frames || !D.strings) throw new Error('the data has no call tree');
      api.data = D;
      normalizeSites();
      setupFrames();
      setupFull();
    } catch (err) {
      fail(err);
      return;
    }
    setupSummary();
    setupFlame();
    setupTimeline();
    drawFlame();
    drawTimeline();
    performance.mark('lowalloc-first-picture');
    setupSites();
    setupCallers();
    drawSizes(-1);
    document.documentElement.dataset.ready = '1';
    resolveReady(api);
    // the other fold's tree, built while the user looks, so the first toggle is quick
    setTimeout(() => valuesOf(tree(!state.fold), state.thread), 0);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
