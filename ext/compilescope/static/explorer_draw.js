// The explorer's painting: boxes, groups and edges on the canvas at the current view, and
// fitting the view to the drawing (or to a highlighted part of it). The state is explorer.js's.

import { bounds } from "./placement.js";

const OP_FILL = ["#dbeafe", "#ffffff", "#ffffff", "#ede9fe", "#fef9c3", "#e5e7eb"];
const FONT_PX = 11; // label font at scale 1; drawn size = FONT_PX * scale (data-label-px)
const READABLE_UP_TO = 150; // drawings of at most this many nodes open at scale >= 1

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
    const litGroups = new Set();
    if (highlight.size) for (const v of highlight) if (rep[v] >= 0) litGroups.add(rep[v]);
    const text = FONT_PX * view.k >= 6; // smaller is noise, not text
    root.setAttribute("data-label-px", text ? (FONT_PX * view.k).toFixed(2) : "0");
    ctx.lineWidth = 1 / view.k;
    ctx.font = `${FONT_PX}px ui-monospace, monospace`;
    boxes.forEach((b) => {
      if (b.kind !== "group" || !b.open || !inView(b)) return;
      ctx.fillStyle = info.depth[b.id] % 2 ? "rgba(120,120,160,0.06)" : "rgba(120,160,120,0.06)";
      ctx.strokeStyle = "#b4b4c8";
      ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
      if (text) { ctx.fillStyle = "#555"; ctx.fillText(`${g.groups[b.id].label}  \u25be`, b.x + 6, b.y + 14); }
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
        if (text) {
          ctx.fillStyle = "#312e81";
          ctx.fillText(clip(`\u25b8 ${g.groups[b.id].label}`, 25), b.x + 6, b.y + 14);
          const grp = g.groups[b.id];
          ctx.fillStyle = "#555"; ctx.fillText(`${grp.size} nodes, ${grp.ops} ops`, b.x + 6, b.y + 28);
        }
      } else {
        const v = b.id;
        ctx.fillStyle = highlight.has(v) ? "#fde68a" : S(g.note[v]) === "recomputed in backward" ? "#fed7aa" : OP_FILL[g.op[v]] || "#fff";
        ctx.strokeStyle = v === selected ? "#dc2626" : S(g.note[v]) === "saved for backward" ? "#7c3aed" : "#6b7280";
        ctx.lineWidth = (v === selected ? 3 : 1) / view.k;
        ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
        ctx.lineWidth = 1 / view.k;
        if (text) {
          ctx.fillStyle = "#111";
          // A parameter's path is told apart by its end (`c_attn.bias`): clip its start.
          const label = S(g.label[v]);
          ctx.fillText(label ? clipStart(label, 25) : clip(g.names[v], 25), b.x + 5, b.y + 13);
          ctx.fillStyle = "#4b5563";
          const t = g.op[v] === 1 ? S(g.target[v]) : g.ops[g.op[v]];
          ctx.fillText(clip(`${t} ${S(g.type[v])}`, 25), b.x + 5, b.y + 27);
        }
      }
    });
    ctx.globalAlpha = 1;
    root.setAttribute("data-drawn", String(Number(root.getAttribute("data-drawn") || 0) + 1));
  }
  function edgePath(A, B) {
    // From the bottom of the source to the top of the target (static_graph.py draws the same).
    const sx = A.x + A.w / 2, sy = A.y + A.h, tx = B.x + B.w / 2, ty = B.y;
    const bend = Math.max(20, Math.abs(ty - sy) / 2);
    ctx.moveTo(sx, sy);
    ctx.bezierCurveTo(sx, sy + bend, tx, ty - bend, tx, ty);
  }
  function redraw() { if (!frame) frame = requestAnimationFrame(draw); }

  let pendingFit = null;
  function fit(only) {
    pendingFit = only || null;
    if (!canvas.clientWidth) { needFit = true; return; }
    fitTo(only);
    redraw();
  }
  function fitTo(only) {
    const chosen = only && only.length ? only : s.boxes;
    if (!chosen.length) return;
    const [x0, y0, x1, y1] = bounds(chosen);
    const w = canvas.clientWidth || 600;
    // Fit the width; a drawing of few boxes is never shrunk below scale 1, so every label is
    // readable at first paint (pan or zoom out to see the rest); the canvas grows to its height.
    let k = Math.min(1.25, w / (x1 - x0 + 40));
    if (chosen.filter((b) => b.kind === "node").length <= READABLE_UP_TO) k = Math.max(k, 1);
    if (only && only.length) k = Math.min(k, (canvas.clientHeight || 480) / (y1 - y0 + 40));
    view.k = Math.min(2, Math.max(0.02, k));
    if (!only) canvas.style.height = `${Math.round(Math.min(760, Math.max(320, (y1 - y0) * view.k + 40)))}px`;
    const spare = w - (x1 - x0) * view.k;
    if (spare > 0) view.tx = spare / 2 - x0 * view.k;
    else { // wider than the canvas: start where the graph starts (its top), centred on it
      const closed = chosen.filter((b) => b.kind === "node" || !b.open);
      const top = closed.reduce((a, b) => (b.y < a.y || (b.y === a.y && b.x < a.x) ? b : a));
      const want = w / 2 - (top.x + top.w / 2) * view.k;
      view.tx = Math.min(20 - x0 * view.k, Math.max(w - 20 - x1 * view.k, want));
    }
    view.ty = 20 - y0 * view.k;
  }
  return { draw, redraw, fit };
}
