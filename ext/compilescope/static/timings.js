// compilescope Timings pane (views/view_data.py builds its data): charts drawn by matplotlib in
// Python, each graph's forward, backward and step times, and the kernels ranked by time per step.
// Text goes in through textContent only; chart SVG is matplotlib's, escaped in Python.

import { el } from "./dom.js";
import { formatMs, formatSpread } from "./format.js";

export function renderTimings(p, data, openKernel) {
  for (const key of ["timings", "roofline", "memory"]) {
    if (!data.charts || !data.charts[key]) continue;
    const holder = el("div", { class: "cs-chart", "data-chart": key });
    holder.innerHTML = data.charts[key]; // matplotlib's SVG, text escaped (views/figures.py)
    p.appendChild(holder);
  }
  const measured = data.compiles.filter((c) => c.timing);
  const why = data.source === "live"
    ? "timings were turned off: --no-time, or capture(..., timings=False)"
    : "a log holds none; times come from a live capture: %%compile_fx, capture()";
  if (!measured.length) p.appendChild(el("p", { class: "cs-muted" }, `Runtimes: not measured (${why}).`));
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
  if (data.kernel_rows && data.kernel_rows.length) p.appendChild(kernelRanking(data, data.kernel_rows, openKernel));
}

// Kernels ranked by time per step (model/kernel_table.py builds the rows): click one to open it.
function kernelRanking(data, rows, openKernel) {
  const rate = (v, unit, peak) => {
    if (!v) return "";
    const [scale, prefix] = v >= 1e12 ? [1e12, "T"] : [1e9, "G"]; // 706.6 TFLOP/s, not 706575.8 G
    return `${(v / scale).toFixed(1)} ${prefix}${unit}/s${peak ? ` (${(peak * 100).toFixed(0)}% of peak)` : ""}`;
  };
  const table = el("table", { class: "cs-table", "data-kernel-rank": "" });
  const head = el("tr");
  for (const h of ["#", "compile id", "kernel", "per step", "share", "module", "line", "bandwidth", "FLOP/s"]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  for (const r of rows) {
    const tr = el("tr");
    const cells = [String(r.rank), `${r.compile_id} ${r.role}`, r.kernel, formatMs(r.per_step_s), r.share === null ? "" : `${(r.share * 100).toFixed(1)}%`,
      r.module, r.line, rate(r.bytes_per_s, "B", r.of_peak_bandwidth), rate(r.flops_per_s, "FLOP", r.of_peak_flops)];
    for (const text of cells) tr.appendChild(el("td", {}, text));
    tr.title = r.code || "";
    tr.style.cursor = "pointer";
    tr.onclick = () => { const ci = data.compiles.findIndex((c) => c.id === r.compile_id); if (ci >= 0) openKernel(ci, r.kernel); };
    table.appendChild(tr);
  }
  return table;
}
