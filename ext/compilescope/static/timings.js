// compilescope Timings pane (views/view_data.py builds its data): charts drawn by matplotlib in
// Python, each graph's forward, backward and step times, and the kernels ranked by time per step.
// Text goes in through textContent only; chart SVG is matplotlib's, escaped in Python.

import { fitColumns } from "./columns.js";
import { el } from "./dom.js";
import { formatMs, formatSpread } from "./format.js";

// The user's own steps as they ran (capturing(), cells that run several steps): the truth for a
// step's time, compiled against eager, and where it goes.
function realSteps(r, synthetic) {
  const box = el("div", { class: "cs-real-steps", "data-real-steps": "" });
  box.appendChild(el("h4", {}, `Your steps as they ran (${r.device}; median of ${r.compiled.n})`));
  const eager = r.eager ? `; eager ${formatSpread(r.eager)}${r.speedup ? ` (compiled is ${r.speedup.toFixed(2)}x)` : ""}` : "";
  box.appendChild(el("div", { "data-real-wall": "" }, `per step: compiled ${formatSpread(r.compiled)}${eager}`));
  if (r.budget && r.budget.length) box.appendChild(stepBudget(r));
  if (r.split_wall) {
    box.appendChild(el("div", { class: "cs-muted" }, `the parts were measured in the next ${r.split_wall.n} steps with every kernel wrapped${r.device === "cpu" ? "" : " and the profiler on"} (${formatMs(r.split_wall.median)} a step there); kernel times are the kernels' own`));
    if (r.busy_s !== null && r.busy_s !== undefined) box.appendChild(el("div", { class: "cs-muted" }, `device busy ${formatMs(r.busy_s)} per step`));
  }
  if (r.note) box.appendChild(el("div", { class: "cs-muted" }, r.note));
  box.appendChild(el("div", { class: "cs-muted" }, `A step runs from one optimizer.step() to the next.${synthetic ? SYNTHETIC : ""}`));
  return box;
}

// The step budget (model/step_budget.py): one stacked bar of the parts, then the parts as rows
// that add up to the whole step; what the parts cannot place is a row of its own, signed.
function stepBudget(r) {
  const total = r.compiled.median;
  const wrap = el("div", { class: "cs-step-budget", "data-step-budget": "" });
  const bar = el("div", { class: "cs-budget-bar", role: "img", "aria-label": "where the step goes" });
  for (const p of r.budget) {
    if (p.s <= 0) continue;
    const seg = el("span", { class: `cs-budget-${p.kind}`, title: `${p.name}: ${formatMs(p.s)} (${(100 * p.share).toFixed(1)}%)` });
    seg.style.width = `${Math.max(0, Math.min(100, 100 * p.share))}%`;
    bar.appendChild(seg);
  }
  wrap.appendChild(bar);
  const table = el("table", { class: "cs-table cs-real-split" });
  const head = el("tr");
  for (const h of ["where the step goes", "per step", "share", "what it is"]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  const row = (label, s, share, detail, attrs, kind) => {
    const tr = el("tr", attrs || {});
    const name = el("td", {});
    if (kind) name.appendChild(el("span", { class: `cs-swatch cs-budget-${kind}` }));
    name.appendChild(document.createTextNode(label));
    tr.append(name, el("td", {}, formatMs(s)), el("td", {}, `${(100 * share).toFixed(1)}%`), el("td", { class: "cs-muted" }, detail));
    table.appendChild(tr);
  };
  for (const p of r.budget) {
    const attrs = { "data-budget-kind": p.kind };
    if (p.kind === "optimizer") attrs["data-part-optimizer"] = "";
    row(p.name, p.s, p.share, p.detail, attrs, p.kind);
  }
  // Measured on their own and inside the rows above (indented, not added to the total).
  for (const g of (r.gaps || []).slice(0, 5)) {
    const tr = el("tr", { class: "cs-muted", "data-part-gap": "" });
    tr.append(el("td", { class: "cs-part" }, `incl. between graphs ${g.before} → ${g.after} (${g.role})`), el("td", {}, formatMs(g.s)), el("td", {}, total > 0 ? `${(100 * g.s / total).toFixed(1)}%` : ""), el("td", {}, ""));
    table.appendChild(tr);
  }
  row("whole step", total, 1, `stopwatch median of ${r.compiled.n} steps`, { "data-budget-kind": "step" });
  wrap.appendChild(table);
  return wrap;
}

const SYNTHETIC = " The per-graph figures below are each graph re-run alone (synthetic), for eager-vs-compiled per graph.";

// Returns what the view must undo when it goes: { dispose }.
export function renderTimings(p, data, openKernel) {
  const measured = data.compiles.filter((c) => c.timing);
  if (data.real_steps) p.appendChild(realSteps(data.real_steps, measured.length > 0));
  else if (data.real_steps_note) p.appendChild(el("p", { class: "cs-muted", "data-real-steps-note": "" }, `Your steps as they ran: not timed (${data.real_steps_note}).${measured.length ? SYNTHETIC : ""}`));
  for (const key of ["timings", "roofline", "memory"]) {
    if (!data.charts || !data.charts[key]) continue;
    const holder = el("div", { class: "cs-chart", "data-chart": key });
    holder.innerHTML = data.charts[key]; // matplotlib's SVG, text escaped (views/figures.py)
    p.appendChild(holder);
  }
  const why = !data.compiles.length ? "nothing was compiled, so nothing compiled was timed"
    : data.source === "live" ? "timings were turned off: --no-time, or capture(..., timings=False)"
    : "a log holds none; times come from a live capture: %%compile_fx, capture()";
  if (!measured.length && !data.real_steps && !data.real_steps_note) p.appendChild(el("p", { class: "cs-muted" }, `Runtimes: not measured (${why}).`));
  for (const c of measured) {
    const t = c.timing;
    p.appendChild(el("div", {}, `${c.id} forward: eager ${formatSpread(t.eager)}; compiled ${formatSpread(t.compiled)}${t.speedup ? `; ${t.speedup.toFixed(2)}x` : ""}`));
    if (t.compiled_backward) {
      p.appendChild(el("div", { "data-backward": "" }, `${c.id} backward: eager ${formatSpread(t.eager_backward)}; compiled ${formatSpread(t.compiled_backward)}${t.backward_speedup ? `; ${t.backward_speedup.toFixed(2)}x` : ""}`));
      p.appendChild(el("div", { "data-step": "" }, `${c.id} step (forward + backward): eager ${formatMs(t.eager_step)}, compiled ${formatMs(t.step)}`));
    }
    if (t.note) p.appendChild(el("div", { class: "cs-muted" }, t.note));
    if (t.gap) p.appendChild(el("div", {}, `forward: ${t.gap}`));
    if (t.backward_gap) p.appendChild(el("div", {}, `backward: ${t.backward_gap}`));
    if (t.memory) p.appendChild(el("div", { "data-memory": "" }, t.memory));
    p.appendChild(el("div", { class: "cs-muted" }, `timed: ${t.what}`));
  }
  if (!data.kernel_rows || !data.kernel_rows.length) return { dispose() {} };
  const { box, columns } = kernelRanking(data, data.kernel_rows, openKernel);
  p.appendChild(box);
  return { dispose: columns.dispose };
}

// The ranking's columns: [key, head, class]; those that fold first when the pane is narrower
// than the table (columns.js), lowest priority first.
const RANK_COLUMNS = [["rank", "#", "cs-num"], ["compile", "compile id", "cs-nowrap"], ["kernel", "kernel", "cs-kname"], ["per_step", "per step", "cs-num"],
  ["share", "share", "cs-num"], ["module", "module", "cs-wrap"], ["line", "line", "cs-wrap"], ["bandwidth", "bandwidth", "cs-rate"], ["flops", "FLOP/s", "cs-rate"]];
const RANK_FOLD = [["flops", "FLOP/s"], ["compile", "compile id"], ["bandwidth", "bandwidth"], ["module", "module"]];

// Kernels ranked by time per step (model/kernel_table.py builds the rows): click one to open it.
function kernelRanking(data, rows, openKernel) {
  const rate = (v, unit, peak) => {
    if (!v) return "";
    const [scale, prefix] = v >= 1e12 ? [1e12, "T"] : [1e9, "G"]; // 706.6 TFLOP/s, not 706575.8 G
    return `${(v / scale).toFixed(1)} ${prefix}${unit}/s${peak ? ` (${(peak * 100).toFixed(0)}% of peak)` : ""}`;
  };
  const table = el("table", { class: "cs-table cs-rank", "data-kernel-rank": "" });
  const head = el("tr");
  for (const [key, h] of RANK_COLUMNS) head.appendChild(el("th", { "data-col": key }, h));
  table.appendChild(head);
  for (const r of rows) {
    const tr = el("tr");
    const role = r.role === "backward" ? "bw" : r.role === "forward" ? "fw" : r.role;
    const cells = [String(r.rank), `${r.compile_id} ${role}`, r.kernel, formatMs(r.per_step_s), r.share === null ? "" : `${(r.share * 100).toFixed(1)}%`,
      r.module, r.line, rate(r.bytes_per_s, "B", r.of_peak_bandwidth), rate(r.flops_per_s, "FLOP", r.of_peak_flops)];
    cells.forEach((text, i) => {
      const [key, , cls] = RANK_COLUMNS[i];
      const td = el("td", { class: cls, "data-col": key }, text);
      if (key === "kernel") td.title = `${r.kernel} (${r.compile_id} ${r.role})`;
      tr.appendChild(td);
    });
    tr.title = r.code || "";
    tr.style.cursor = "pointer";
    tr.onclick = () => { const ci = data.compiles.findIndex((c) => c.id === r.compile_id); if (ci >= 0) openKernel(ci, r.kernel); };
    table.appendChild(tr);
  }
  const box = el("div", { "data-table": "kernel-rank" });
  box.appendChild(table);
  return { box, columns: fitColumns(box, table, RANK_FOLD) };
}
