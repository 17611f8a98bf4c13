// compilescope Timings pane (views/view_data.py builds its data): charts drawn by matplotlib in
// Python, each graph's forward, backward and step times, and the kernels ranked by time per step.
// Text goes in through textContent only; chart SVG is matplotlib's, escaped in Python.

function csRenderTimings(p, data, openKernel) {
  for (const key of ["timings", "roofline", "memory"]) {
    if (!data.charts || !data.charts[key]) continue;
    const holder = csEl("div", { class: "cs-chart", "data-chart": key });
    holder.innerHTML = data.charts[key]; // matplotlib's SVG, text escaped (views/figures.py)
    p.appendChild(holder);
  }
  const measured = data.compiles.filter((c) => c.timing);
  const why = data.source === "live"
    ? "timings were turned off: --no-time, or capture(..., timings=False)"
    : "a log holds none; times come from a live capture: %%compile_fx, capture()";
  if (!measured.length) p.appendChild(csEl("p", { class: "cs-muted" }, `Runtimes: not measured (${why}).`));
  for (const c of measured) {
    const t = c.timing;
    p.appendChild(csEl("div", {}, `${c.id} forward: eager ${csSpread(t.eager)}; compiled ${csSpread(t.compiled)}${t.speedup ? `; ${t.speedup.toFixed(2)}x` : ""}`));
    if (t.compiled_backward) {
      p.appendChild(csEl("div", { "data-backward": "" }, `${c.id} backward: eager ${csSpread(t.eager_backward)}; compiled ${csSpread(t.compiled_backward)}${t.backward_speedup ? `; ${t.backward_speedup.toFixed(2)}x` : ""}`));
      p.appendChild(csEl("div", { "data-step": "" }, `${c.id} step (forward + backward): eager ${csMs(t.eager_step)}, compiled ${csMs(t.step)}`));
    }
    if (t.note) p.appendChild(csEl("div", { class: "cs-muted" }, t.note));
    if (t.gap) p.appendChild(csEl("div", {}, `forward: ${t.gap}`));
    if (t.backward_gap) p.appendChild(csEl("div", {}, `backward: ${t.backward_gap}`));
    if (t.memory) p.appendChild(csEl("div", { "data-memory": "" }, t.memory));
    p.appendChild(csEl("div", { class: "cs-muted" }, `timed: ${t.what}`));
  }
  if (data.kernel_rows && data.kernel_rows.length) p.appendChild(csKernelRanking(data, data.kernel_rows, openKernel));
}

// Kernels ranked by time per step (model/kernel_table.py builds the rows): click one to open it.
function csKernelRanking(data, rows, openKernel) {
  const rate = (v, unit, peak) => {
    if (!v) return "";
    const [scale, prefix] = v >= 1e12 ? [1e12, "T"] : [1e9, "G"]; // 706.6 TFLOP/s, not 706575.8 G
    return `${(v / scale).toFixed(1)} ${prefix}${unit}/s${peak ? ` (${(peak * 100).toFixed(0)}% of peak)` : ""}`;
  };
  const table = csEl("table", { class: "cs-table", "data-kernel-rank": "" });
  const head = csEl("tr");
  for (const h of ["#", "compile id", "kernel", "per step", "share", "module", "line", "bandwidth", "FLOP/s"]) head.appendChild(csEl("th", {}, h));
  table.appendChild(head);
  for (const r of rows) {
    const tr = csEl("tr");
    const cells = [String(r.rank), `${r.compile_id} ${r.role}`, r.kernel, csMs(r.per_step_s), r.share === null ? "" : `${(r.share * 100).toFixed(1)}%`,
      r.module, r.line, rate(r.bytes_per_s, "B", r.of_peak_bandwidth), rate(r.flops_per_s, "FLOP", r.of_peak_flops)];
    for (const text of cells) tr.appendChild(csEl("td", {}, text));
    tr.title = r.code || "";
    tr.style.cursor = "pointer";
    tr.onclick = () => { const ci = data.compiles.findIndex((c) => c.id === r.compile_id); if (ci >= 0) openKernel(ci, r.kernel); };
    table.appendChild(tr);
  }
  return table;
}
