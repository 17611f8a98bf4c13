// compilescope partition pane (views/partition_view.py builds its data): the real activation
// memory, the saved tensors and what each is, what the backward recomputes, and the activation
// memory budget sweep as a chart (hover a point for its figures, click it to read them below).
// Text goes in through textContent only.

import { el } from "./dom.js";
import { formatBytes } from "./format.js";

// Whether each fold was left open: the choice holds when another stage or compile is shown.
const folds = { saved: false, recomputed: false };

function fold(key, summary) {
  const box = el("details", { class: `cs-fold-${key}`, "data-fold": key });
  box.open = folds[key];
  box.addEventListener("toggle", () => { folds[key] = box.open; });
  box.appendChild(el("summary", {}, summary));
  return box;
}

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

export function renderPartition(parent, c, onSaved) {
  const p = c.partition;
  // One line each, with the counts; the table, the sweep and the names open on click.
  const activations = p.activation_bytes !== null && p.activation_bytes !== undefined ? `, activation memory ${formatBytes(p.activation_bytes)}` : "";
  const box = fold("saved", `saved for backward: ${plural(c.saved.length, "tensor")}${c.saved_text ? ` (${c.saved_text})` : ""}${activations}`);
  parent.appendChild(box);
  box.appendChild(el("div", { class: "cs-partition-head" }, p.headline));
  if (p.held && p.held.text) box.appendChild(heldBlock(p.held));
  box.appendChild(el("div", { class: "cs-muted" }, "Click a saved tensor to see where the forward makes it and where the backward uses it."));
  const body = el("div", { class: "cs-partition-body" });
  const table = el("table", { class: "cs-table cs-saved-table" });
  const hr = el("tr");
  for (const h of ["saved", "type", "bytes", "what it is", "backward users"]) hr.appendChild(el("th", {}, h));
  table.appendChild(hr);
  // What costs memory first: activations by size, then inputs, parameters and sizes.
  const rank = (s) => ((p.kinds[s.name] || "").startsWith("activation") ? 0 : 1);
  const rows = [...c.saved].sort((a, b) => rank(a) - rank(b) || (b.bytes || 0) - (a.bytes || 0));
  for (const s of rows) {
    const tr = el("tr", { class: "cs-saved-row", "data-kind": (p.kinds[s.name] || "").split(" ")[0] });
    tr.append(el("td", {}, s.name), el("td", {}, s.type), el("td", {}, formatBytes(s.bytes)),
      el("td", {}, p.kinds[s.name] || ""), el("td", {}, String(s.users.length)));
    tr.onclick = () => onSaved(s);
    table.appendChild(tr);
  }
  body.appendChild(table);
  box.appendChild(body);
  if (p.recomputed.length) {
    const again = fold("recomputed", `recomputed in the backward: ${plural(p.recomputed.length, "node")}`);
    again.appendChild(el("div", { class: "cs-muted cs-recomputed" },
      `orange in the partition graph; dashed purple edges cross the cut: ${p.recomputed.join(", ")}`));
    parent.appendChild(again);
  }
  if (p.sweep) body.appendChild(sweepChart(p.sweep, p.sweep_flops, p.sweep_basis));
  else if (p.lab) body.appendChild(el("div", { class: "cs-muted" }, `budget sweep: not available: ${p.lab}`));
  else body.appendChild(el("div", { class: "cs-muted" }, `budget sweep: not run for this compile (its joint graph is large); run ${p.hint} and show the capture again`));
}

// What the compiled forward really held (measured live), beside the prediction above: the
// copies Inductor made after the partition, and tensors saved in another layout.
function heldBlock(held) {
  const block = el("div", { class: "cs-held" }, held.text);
  if (held.differences.length) {
    const list = el("ul", { class: "cs-held-differences" });
    for (const d of held.differences) list.appendChild(el("li", { "data-what": d.what }, `${d.saved}: ${d.detail}`));
    block.appendChild(list);
  }
  return block;
}

function sweepChart(points, byFlops, basis) {
  const NS = "http://www.w3.org/2000/svg";
  const W = 480, H = 240, L = 64, R = 16, T = 24, B = 40;
  const svgEl = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  };
  const yOf = (q) => (byFlops ? q.recompute_flops / 1e6 : q.recomputed_ops);
  const unit = Math.max(...points.map((q) => q.activation_bytes)) >= 2 ** 20 ? ["MiB", 2 ** 20] : ["KiB", 1024];
  const xs = points.map((q) => q.activation_bytes / unit[1]), ys = points.map(yOf);
  const xMax = Math.max(...xs) || 1, yMax = Math.max(...ys) || 1;
  const px = (x) => L + (x / xMax) * (W - L - R), py = (y) => H - B - (y / yMax) * (H - T - B);
  const wrap = el("div", { class: "cs-sweep" });
  const svg = svgEl("svg", { width: W, height: H, class: "cs-sweep-chart", "font-family": "sans-serif", "font-size": 11 });
  svg.appendChild(svgEl("text", { x: L, y: 14, "font-weight": "bold" }, "activation memory budget sweep (predicted)"));
  svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#9ca3af" }));
  svg.appendChild(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#9ca3af" }));
  svg.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, `activation memory (${unit[0]})`));
  svg.appendChild(svgEl("text", { x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle" }, byFlops ? "recomputed MFLOP (matmul, conv)" : "recomputed ops"));
  for (const [v, y] of [[0, H - B + 14], [xMax, H - B + 14]]) svg.appendChild(svgEl("text", { x: px(v), y, "text-anchor": "middle", fill: "#555" }, v.toFixed(2)));
  for (const v of [0, yMax]) svg.appendChild(svgEl("text", { x: L - 4, y: py(v) + 4, "text-anchor": "end", fill: "#555" }, byFlops ? v.toFixed(1) : String(v)));
  const minCut = points.filter((q) => q.partitioner === "min_cut");
  svg.appendChild(svgEl("polyline", { points: minCut.map((q) => `${px(q.activation_bytes / unit[1])},${py(yOf(q))}`).join(" "), fill: "none", stroke: "#6366f1" }));
  const detail = el("div", { class: "cs-muted cs-sweep-detail" }, "Hover or click a point: min-cut at a budget (circles), the default partitioner (square), the compile's own choice (ringed in red).");
  const describe = (q) => `${q.partitioner}${q.partitioner === "min_cut" ? `, budget ${q.budget}` : ""}${q.captured ? " (what the compile did)" : ""}: activations ${formatBytes(q.activation_bytes)}, ${q.saved} saved, ${q.recomputed_ops} ops recomputed${q.recompute_flops !== null ? `, ${(q.recompute_flops / 1e6).toFixed(1)} MFLOP` : ""}`;
  // Points on the same spot (budgets that give the same partition) share one hover text.
  const sameSpot = new Map();
  points.forEach((q, i) => { const k = `${q.partitioner} ${xs[i]} ${ys[i]}`; sameSpot.set(k, [...(sameSpot.get(k) || []), q]); });
  points.forEach((q, i) => {
    const x = px(xs[i]), y = py(ys[i]);
    const spot = sameSpot.get(`${q.partitioner} ${xs[i]} ${ys[i]}`);
    const title = spot.length > 1 && q.partitioner === "min_cut" ? `budgets ${spot.map((o) => o.budget).join(", ")}: the same partition. ${describe(q)}` : describe(q);
    const mark = q.partitioner === "default"
      ? svgEl("rect", { x: x - 5, y: y - 5, width: 10, height: 10, fill: "#f59e0b", class: "cs-sweep-point" })
      : svgEl("circle", { cx: x, cy: y, r: 5, fill: "#6366f1", class: "cs-sweep-point" });
    mark.setAttribute("data-budget", String(q.budget));
    mark.setAttribute("data-partitioner", q.partitioner);
    mark.appendChild(svgEl("title", {}, title));
    mark.style.cursor = "pointer";
    mark.addEventListener("click", () => { detail.textContent = title; });
    svg.appendChild(mark);
    if (q.captured) svg.appendChild(svgEl("circle", { cx: x, cy: y, r: 10, fill: "none", stroke: "#dc2626", "stroke-width": 2, class: "cs-sweep-captured" }));
  });
  wrap.append(svg, detail);
  if (basis) wrap.appendChild(el("div", { class: "cs-muted cs-sweep-basis" }, basis));
  return wrap;
}
