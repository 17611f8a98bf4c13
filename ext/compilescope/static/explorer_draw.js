// The explorer's painting: boxes, groups and edges on the canvas at the current view, and
// fitting the view to the drawing (or to a highlighted part of it). The state is explorer.js's.

import { bounds, edgeCurve, groupText } from "./placement.js";

const OP_FILL = ["#dbeafe", "#ffffff", "#ffffff", "#ede9fe", "#fef9c3", "#e5e7eb"];
const FONT_PX = 11; // label font at scale 1; drawn size = FONT_PX * scale (data-label-px)
const READABLE_UP_TO = 150; // drawings of at most this many nodes open at scale >= 1
const MARGIN = 20; // CSS px around the drawing when it is fitted
// "fit" never goes below labels of FIT_LABEL_PX: a bigger drawing is shown from its top and
// scrolls (wheel, drag); "whole graph" frames everything, however small.
const FIT_LABEL_PX = 10;
// Below this a label scaled with its box is noise; a box still tall and wide enough for text
// at this size keeps its label, drawn at this size and cut to the box's width.
const LEAST_LABEL_PX = 9;

// The tallest the canvas grows: down to the window's bottom from where it starts (when that is
// in the window's upper half; else the window less the explorer's bar and the stage buttons),
// so that the whole canvas, and so the whole fitted drawing, is seen at once.
function canvasMaxHeight(canvas) {
  const h = window.innerHeight || 950, top = canvas.getBoundingClientRect().top;
  const room = top > 0 && top < h / 2 ? h - top - 8 : h - 90;
  return Math.round(Math.min(1000, Math.max(320, room)));
}

function clipStart(s, n) { return s.length > n ? "\u2026" + s.slice(s.length - n + 1) : s; }
function clip(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }

// Returns draw (paint now), redraw (paint on the next frame) and fit (frame the boxes).
export function createPainter(s, root, canvas) {
  const { g, info, S, view } = s;
  const ctx = canvas.getContext("2d");
  let frame = 0;
  function size() {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, canvas.clientWidth || 600), h = Math.max(200, canvas.clientHeight || 480);
    canvas.width = w * ratio; canvas.height = h * ratio;
    return { w, h, ratio };
  }
  let needFit = true; // fit once the canvas has a size (it has none inside a hidden tab)
  function draw() {
    frame = 0;
    if (!canvas.clientWidth) return;
    if (needFit) { needFit = false; fitTo(pendingFit); }
    const { boxes, edges, highlight, rep, selected } = s;
    const { w, h, ratio } = size();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.setTransform(ratio * view.k, 0, 0, ratio * view.k, ratio * view.tx, ratio * view.ty);
    const x0 = -view.tx / view.k, y0 = -view.ty / view.k, x1 = x0 + w / view.k, y1 = y0 + h / view.k;
    const inView = (b) => b.x + b.w >= x0 && b.x <= x1 && b.y + b.h >= y0 && b.y <= y1;
    // What a test (or a reader of the page) can see: the labels of the boxes drawn whole inside
    // the visible area (an open group: its title strip), one per line, on every draw.
    const whole = (x, y, bw, bh) => x >= x0 && x + bw <= x1 && y >= y0 && y + bh <= y1;
    const seen = [];
    for (const b of boxes) {
      if (b.kind === "node") { if (whole(b.x, b.y, b.w, b.h)) seen.push(g.names[b.id]); continue; }
      const grp = g.groups[b.id];
      if (b.open ? whole(b.x, b.y, Math.min(b.w, 120), g.sizes.label) : whole(b.x, b.y, b.w, b.h)) seen.push(grp.path || grp.label);
    }
    const listed = seen.join("\n");
    if (listed !== root.getAttribute("data-in-view")) root.setAttribute("data-in-view", listed);
    const litGroups = new Set();
    if (highlight.size) for (const v of highlight) if (rep[v] >= 0) litGroups.add(rep[v]);
    const labels = []; // [box, lines, colours, on, open]: drawn last, in screen pixels
    ctx.lineWidth = 1 / view.k;
    ctx.font = `${FONT_PX}px ui-monospace, monospace`;
    boxes.forEach((b) => {
      if (b.kind !== "group" || !b.open || !inView(b)) return;
      ctx.fillStyle = info.depth[b.id] % 2 ? "rgba(120,120,160,0.06)" : "rgba(120,160,120,0.06)";
      ctx.strokeStyle = "#b4b4c8";
      ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
      labels.push([b, [`${groupText(g, b.id)}  \u25be`], ["#555"], true, true]);
    });
    ctx.strokeStyle = "#9aa0a6";
    ctx.beginPath();
    for (const [a, b] of edges) {
      const A = boxes[a], B = boxes[b];
      if (Math.max(A.y + A.h, B.y) < y0 || Math.min(A.y + A.h, B.y) > y1) continue;
      edgePath(A, B);
    }
    ctx.stroke();
    // The cut of a partition: edges that leave a saved tensor cross from forward to backward.
    ctx.strokeStyle = "#7c3aed"; ctx.setLineDash([6 / view.k, 4 / view.k]); ctx.beginPath();
    for (const [a, b, u, v] of edges) {
      if (S(g.note[u]) !== "saved for backward" || !String(g.names[v]).startsWith("bw.")) continue;
      edgePath(boxes[a], boxes[b]);
    }
    ctx.stroke(); ctx.setLineDash([]);
    if (highlight.size) {
      ctx.strokeStyle = "#e8710a"; ctx.lineWidth = 2 / view.k; ctx.beginPath();
      for (const [a, b, u, v] of edges) {
        if (!(highlight.has(u) && highlight.has(v))) continue;
        edgePath(boxes[a], boxes[b]);
      }
      ctx.stroke(); ctx.lineWidth = 1 / view.k;
    }
    boxes.forEach((b, index) => {
      if (b.kind === "group" && b.open) return;
      if (!inView(b)) return;
      const on = !highlight.size || (b.kind === "node" ? highlight.has(b.id) : litGroups.has(index));
      ctx.globalAlpha = on ? 1 : 0.3;
      if (b.kind === "group") {
        ctx.fillStyle = "#eef2ff"; ctx.strokeStyle = on && highlight.size ? "#e8710a" : "#6366f1";
        ctx.fillRect(b.x + 3, b.y + 3, b.w, b.h); ctx.strokeRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
        const grp = g.groups[b.id];
        labels.push([b, [`\u25b8 ${groupText(g, b.id)}`, `${grp.size} nodes, ${grp.ops} ops`], ["#312e81", "#555"], on, false]);
      } else {
        const v = b.id;
        ctx.fillStyle = highlight.has(v) ? "#fde68a" : S(g.note[v]) === "recomputed in backward" ? "#fed7aa" : OP_FILL[g.op[v]] || "#fff";
        ctx.strokeStyle = v === selected ? "#dc2626" : S(g.note[v]) === "saved for backward" ? "#7c3aed" : "#6b7280";
        ctx.lineWidth = (v === selected ? 3 : 1) / view.k;
        ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
        ctx.lineWidth = 1 / view.k;
        // A parameter's path is told apart by its end (`c_attn.bias`): clip its start.
        const label = S(g.label[v]);
        const t = g.op[v] === 1 ? S(g.target[v]) : g.ops[g.op[v]];
        labels.push([b, [label ? [label] : g.names[v], `${t} ${S(g.type[v])}`], ["#111", "#4b5563"], on, false]);
      }
    });
    ctx.globalAlpha = 1;
    drawLabels(labels, w, h, ratio);
    drawScrollMarks(w, h, ratio);
    root.setAttribute("data-drawn", String(Number(root.getAttribute("data-drawn") || 0) + 1));
  }
  // Labels in screen pixels: at FONT_PX * scale while that is legible, else at LEAST_LABEL_PX
  // in every box that can hold a line of it (an open group: on a backing over its children).
  function drawLabels(labels, w, h, ratio) {
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const scaled = FONT_PX * view.k, px = Math.max(LEAST_LABEL_PX, scaled);
    const lineH = (px * 13) / FONT_PX;
    ctx.font = `${px}px ui-monospace, monospace`;
    const charW = ctx.measureText("0").width || px * 0.6;
    const shown = [];
    let drawn = 0;
    for (const [b, lines, colours, on, open] of labels) {
      const sx = view.tx + b.x * view.k, sy = view.ty + b.y * view.k;
      const sw = b.w * view.k, sh = b.h * view.k;
      if (sx > w || sy > h || sx + sw < 0 || sy + sh < 0) continue;
      const pad = (open ? 6 : 5) * Math.min(1, view.k);
      // At scale, 25 characters (what a box is wide for); smaller, what the box's width holds.
      const room = scaled >= LEAST_LABEL_PX ? 25 : Math.floor((sw - 2 * pad) / charW);
      const rows = open ? (sh >= lineH + 3 ? 1 : 0) : Math.floor((sh - 3) / lineH);
      const fits = room >= 4 && rows >= 1;
      shown.push([b.kind, b.kind === "node" ? g.names[b.id] : g.groups[b.id].path || g.groups[b.id].label,
        Math.round(sx), Math.round(sy), Math.round(sw), Math.round(sh), fits ? 1 : 0]);
      if (!fits) continue;
      drawn += 1;
      ctx.globalAlpha = on ? 1 : 0.3;
      lines.slice(0, rows).forEach((line, i) => {
        const text = Array.isArray(line) ? clipStart(line[0], room) : clip(line, room);
        if (open && scaled < LEAST_LABEL_PX) {
          ctx.fillStyle = "rgba(255,255,255,0.85)";
          ctx.fillRect(sx + pad - 2, sy + 1, Math.min(sw - 2 * pad + 4, text.length * charW + 4), lineH + 2);
        }
        ctx.fillStyle = colours[i];
        ctx.fillText(text, sx + pad, sy + lineH * (i + 1));
      });
    }
    ctx.globalAlpha = 1;
    s.labelBoxes = shown; // what a test reads (root.labelBoxes()): every box in view, labelled or not
    root.setAttribute("data-label-px", drawn ? px.toFixed(2) : "0");
  }
  // Where the window is along a drawing larger than it: thin bars at the right and bottom
  // edges, so that there is visibly more to scroll to.
  function drawScrollMarks(w, h) {
    const [x0, y0, x1, y1] = bounds(s.boxes);
    const lo = (t, a, size) => -(t + a * view.k) / size, full = (a, b) => (b - a) * view.k;
    const marks = [];
    ctx.fillStyle = "rgba(60,60,80,0.35)";
    const H = full(y0, y1) + 2 * MARGIN, W = full(x0, x1) + 2 * MARGIN;
    if (H > h + 1) {
      const top = Math.max(0, lo(view.ty - MARGIN, y0, H)), len = Math.min(1 - top, h / H);
      ctx.fillRect(w - 6, top * h, 4, Math.max(12, len * h));
      marks.push("y");
    }
    if (W > w + 1) {
      const left = Math.max(0, lo(view.tx - MARGIN, x0, W)), len = Math.min(1 - left, w / W);
      ctx.fillRect(left * w, h - 6, Math.max(12, len * w), 4);
      marks.push("x");
    }
    const said = marks.join(" ");
    if (said !== root.getAttribute("data-scrolls")) root.setAttribute("data-scrolls", said);
  }
  function edgePath(A, B) {
    // Down from the source's bottom to the target's top, or between their sides when the
    // target is not below (static_graph.py draws the same curve).
    const [sx, sy, ax, ay, bx, by, tx, ty] = edgeCurve(A, B);
    ctx.moveTo(sx, sy);
    ctx.bezierCurveTo(ax, ay, bx, by, tx, ty);
  }
  function redraw() { if (!frame) frame = requestAnimationFrame(draw); }

  let pendingFit = null;
  let fitted = null; // the view the last fit made: while the reader has not moved it, a resize fits again
  // `only`: boxes to frame (a highlight). `first`: the first picture, where a drawing of few
  // nodes keeps scale 1 (its labels readable; the canvas scrolls) and `beforeFirst` may open
  // less when the drawing cannot fit readably (explorer.js). `whole`: everything, however small.
  function fit(only, first, whole) {
    pendingFit = { only: only || null, first: !!first, whole: !!whole };
    if (!canvas.clientWidth) { needFit = true; return; }
    fitTo(pendingFit);
    redraw();
  }
  // The scale that fits `chosen` into the canvas's width and its tallest height.
  function scaleFor(chosen, height) {
    const [x0, y0, x1, y1] = bounds(chosen);
    const w = canvas.clientWidth || 600, h = height || canvasMaxHeight(canvas);
    return Math.min(1.25, (w - 2 * MARGIN) / Math.max(1, x1 - x0), (h - 2 * MARGIN) / Math.max(1, y1 - y0));
  }
  function fitTo(want) {
    want = want || { only: null, first: false };
    const only = want.only && want.only.length ? want.only : null;
    if (want.first && s.beforeFirst) s.beforeFirst(scaleFor);
    const chosen = only || s.boxes;
    if (!chosen.length) return;
    const [x0, y0, x1, y1] = bounds(chosen);
    const w = canvas.clientWidth || 600;
    let k = scaleFor(chosen, only ? canvas.clientHeight || 480 : 0);
    if (want.first && !only && (info.n <= READABLE_UP_TO || s.tall)) k = Math.max(k, 1);
    if (!want.whole) k = Math.max(k, FIT_LABEL_PX / FONT_PX);
    view.k = Math.min(2, Math.max(0.02, k));
    // The canvas takes the drawing's height (within the window), so what is shown is all seen.
    if (!only) canvas.style.height = `${Math.round(Math.min(canvasMaxHeight(canvas), Math.max(320, (y1 - y0) * view.k + 2 * MARGIN)))}px`;
    const spare = w - (x1 - x0) * view.k;
    if (spare > 0) view.tx = spare / 2 - x0 * view.k;
    else { // wider than the canvas: start where the graph starts (its top), centred on it
      const closed = chosen.filter((b) => b.kind === "node" || !b.open);
      const top = closed.reduce((a, b) => (b.y < a.y || (b.y === a.y && b.x < a.x) ? b : a));
      const centred = w / 2 - (top.x + top.w / 2) * view.k;
      view.tx = Math.min(MARGIN - x0 * view.k, Math.max(w - MARGIN - x1 * view.k, centred));
    }
    const spareY = (canvas.clientHeight || 480) - (y1 - y0) * view.k;
    view.ty = only && spareY > 0 ? spareY / 2 - y0 * view.k : MARGIN - y0 * view.k;
    fitted = { want, k: view.k, tx: view.tx, ty: view.ty, width: w };
  }
  // The canvas changed size (a scroll bar came, the output narrowed): a view the reader has not
  // moved since it was fitted is fitted again, so nothing is cut at the right at first paint.
  function resized() {
    const f = fitted;
    if (f && canvas.clientWidth && canvas.clientWidth !== f.width &&
        view.k === f.k && view.tx === f.tx && view.ty === f.ty) {
      pendingFit = f.want; needFit = true;
    }
    redraw();
  }
  return { draw, redraw, fit, resized };
}
