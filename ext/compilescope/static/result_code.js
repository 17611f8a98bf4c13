// The result view's code tab: the chosen compile id's kernels in a table, the picked kernel's
// source, provenance, launch figures and Triton IR beside it, and the whole output code.
// Returns openKernel, which the other tabs link to, and dispose.

import { el } from "./dom.js";
import { fitColumns } from "./columns.js";
import { cellNumbers, formatLocation, formatMs, formatSpread } from "./format.js";
import { highlight } from "./text.js";

// A kernel's lines, its own first: frames inside installed libraries (the wrappers every kernel
// of a transformers model shares) fold behind a "+N" that opens them all.
function linesCell(k, common, cellOf) {
  const td = el("td", { class: "cs-klines", "data-col": "lines" });
  const all = k.lines.map((l, i) => [l, (k.lib || [])[i]]).filter(([l]) => l);
  if (!all.length) return td;
  const own = all.filter(([, lib]) => !lib).map(([l]) => l);
  const distinct = all.filter(([l, lib]) => lib && !common.has(`${l[0]}:${l[1]}`)).map(([l]) => l);
  // Own lines; else the innermost of the library lines this kernel does not share with the rest.
  const first = own.length ? own.slice(0, 2) : (distinct.length ? distinct : all.map(([l]) => l)).slice(-1);
  const brief = el("span", { class: "cs-klines-brief" });
  for (const l of first) brief.appendChild(el("span", { class: "cs-loc", title: l[0] }, formatLocation(l, cellOf)));
  td.appendChild(brief);
  const rest = all.length - first.length;
  if (rest > 0) {
    const open = el("button", { class: "cs-link cs-more-lines", "data-more-lines": String(rest), title: "every line the kernel was made from, outermost first" }, `+${rest}${own.length ? "" : " in libraries"}`);
    open.onclick = (ev) => {
      ev.stopPropagation();
      brief.textContent = "";
      for (const [l, lib] of all) brief.appendChild(el("span", { class: lib ? "cs-loc cs-muted" : "cs-loc", title: l[0] }, formatLocation(l, cellOf)));
      open.remove();
    };
    td.appendChild(open);
  }
  return td;
}

// Frames every kernel of a compile id has (with more than one kernel): no kernel's own line.
function sharedLines(kernels) {
  const keyed = kernels.filter((k) => k.lines.some(Boolean)).map((k) => new Set(k.lines.filter(Boolean).map((l) => `${l[0]}:${l[1]}`)));
  if (keyed.length < 2) return new Set();
  return new Set([...keyed[0]].filter((key) => keyed.every((s) => s.has(key))));
}

// Columns that fold first when the table is wider than its box (columns.js).
const KERNEL_FOLD = [["calls", "calls"], ["kind", "kind"], ["nodes", "nodes"]];

function kernelTable(c, cellOf, onPick) {
  const table = el("table", { class: "cs-table" });
  const hr = el("tr");
  const timed = c.kernels.some((k) => k.time); // no empty column when nothing was timed
  const heads = [["kernel", "kernel"], ["kind", "kind"], ["calls", "calls"], ...(timed ? [["time", "per call"]] : []), ["nodes", "nodes"], ["lines", "lines"]];
  for (const [key, h] of heads) hr.appendChild(el("th", { "data-col": key, title: key === "time" ? "median time per call" : "" }, h));
  table.appendChild(hr);
  const common = sharedLines(c.kernels);
  for (const k of c.kernels) {
    const tr = el("tr", { class: "cs-kernel-row", "data-kernel": k.name });
    tr.append(el("td", { class: "cs-kname", title: k.name, "data-col": "kernel" }, k.name), el("td", { title: "language, graph", "data-col": "kind" }, `${k.lang} ${k.role === "backward" ? "bw" : k.role === "forward" ? "fw" : k.role}`), el("td", { "data-col": "calls" }, k.calls),
      ...(timed ? [el("td", { title: k.time ? formatSpread(k.time) : "", "data-col": "time" }, k.time ? formatMs(k.time.median) : "")] : []),
      el("td", { title: "post-grad nodes it computes", "data-col": "nodes" }, k.fused.length), linesCell(k, common, cellOf));
    tr.onclick = () => onPick(k);
    table.appendChild(tr);
  }
  return table;
}

// What the log says of how the kernel ran: launch figures, grid and block, Triton's IR.
function launchDetails(box, k) {
  const launch = Object.entries(k.launch || {}).filter(([a]) => a !== "autotune_us");
  const took = (k.launch || {}).autotune_us;
  const tuning = took ? ` (chosen by autotuning: compiling and timing the candidates took ${(took / 1e3).toFixed(1)} ms)` : "";
  if (launch.length) box.appendChild(el("div", { "data-launch": "" }, `launch: ${launch.map(([a, b]) => `${a}=${b}`).join(", ")}${tuning}`));
  if (k.autotune && k.autotune.length) box.appendChild(autotuneTable(k.autotune));
  if (k.grid.length) box.appendChild(el("div", { "data-grid": "" }, `launched with grid (${k.grid.join(", ")}), block (${k.block.join(", ")})` + (k.registers ? `, ${k.registers} registers per thread` : "") + " (profiler)"));
}

// The configs the runtime autotuner benchmarked when the kernel first ran, fastest first.
function autotuneTable(choices) {
  const box = el("details", { class: "cs-text", "data-autotune": String(choices.length) });
  const chosen = choices.find((c) => c.chosen);
  box.appendChild(el("summary", {}, `autotuned: ${choices.length} configs benchmarked${chosen ? `; chosen ${chosen.config} (${chosen.ms === null ? "failed" : `${(chosen.ms * 1e3).toFixed(1)} us`})` : ""}`));
  const table = el("table", { class: "cs-table" });
  const head = el("tr");
  for (const h of ["config", "time", "registers", "spills", ""]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  const order = [...choices].sort((a, b) => (a.ms === null) - (b.ms === null) || a.ms - b.ms);
  for (const c of order) {
    const tr = el("tr");
    tr.append(el("td", {}, c.config), el("td", {}, c.ms === null ? "failed" : `${(c.ms * 1e3).toFixed(1)} us`),
      el("td", {}, c.registers ?? ""), el("td", {}, c.spills ?? ""), el("td", {}, c.chosen ? "chosen" : ""));
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}

function irDetails(box, k) {
  for (const [stage, text] of Object.entries(k.ir || {})) {
    const d = el("details", { class: "cs-text", "data-ir": stage });
    d.appendChild(el("summary", {}, `Triton IR: ${stage.toUpperCase()} (${text.split("\n").length} lines, from Triton's cache)`));
    d.appendChild(el("pre", {}, text));
    box.appendChild(d);
  }
  if (k.lang === "triton" && !Object.keys(k.ir || {}).length) box.appendChild(el("div", { class: "cs-muted" }, "Triton IR: not found in Triton's cache (a log read offline, or a cache hit from another process)"));
}

// `choice`: the chosen compile id (result.js); `links`: openGraph(ci, graph, names),
// markLines(locs) (in the cell pane), showTab(key).
export function renderCode(codePane, data, choice, links) {
  const cellOf = cellNumbers(data);
  let columns = null; // the kernel table's, refitted until the next compile id is shown
  codePane.classList.add("cs-codepane");
  const kernelList = el("div", { class: "cs-kernels" });
  const kernelShow = el("div", { class: "cs-kernel" });
  codePane.append(choice.select(() => renderKernels()), kernelList, kernelShow);
  function renderKernels() {
    const c = data.compiles[choice.index];
    kernelList.textContent = ""; kernelShow.textContent = "";
    if (columns) { columns.dispose(); columns = null; }
    if (!c.kernels.length) { kernelList.appendChild(el("p", { class: "cs-muted" }, "no generated code for this compile id (backend without Inductor, or nothing to compile)")); return; }
    const table = kernelTable(c, cellOf, (k) => showKernel(c, k));
    const box = el("div", { "data-table": "kernels" });
    box.appendChild(table);
    kernelList.appendChild(box);
    columns = fitColumns(box, table, KERNEL_FOLD);
    if (c.backward_pending) kernelList.appendChild(el("p", { class: "cs-muted", "data-backward-pending": "" }, "No backward kernels: Inductor compiles the backward at its first call, and this code did not run backward. The backward graph is in the Graphs tab."));
    showKernel(c, c.kernels.find((k) => k.lang !== "extern") || c.kernels[0], true);
    for (const o of c.output_code) {
      const d = el("details", { class: "cs-text" });
      d.appendChild(el("summary", {}, `whole output code (${o.role || o.aot_id || "module"})`));
      d.appendChild(highlight(o.text));
      kernelList.appendChild(d);
    }
  }
  function showKernel(c, k, quiet) {
    kernelShow.textContent = "";
    for (const row of kernelList.querySelectorAll(".cs-kernel-row")) row.classList.toggle("cs-on", row.getAttribute("data-kernel") === k.name);
    kernelShow.appendChild(el("h4", { title: k.name }, `${k.lang} kernel ${k.name}`));
    if (k.time) kernelShow.appendChild(el("div", {}, `time per call: ${formatSpread(k.time)}, ${k.calls_per_run} calls per run`));
    if (k.bandwidth) kernelShow.appendChild(el("div", {}, `achieved bandwidth: ${(k.bandwidth / 1e9).toFixed(1)} GB/s (Inductor's estimate of ${(k.bytes / 1e6).toFixed(3)} MB moved per call, over the median)`));
    const lines = k.lines.filter(Boolean);
    if (!quiet) links.markLines(lines); // a click marks the kernel's lines; the first pick does not
    kernelShow.setAttribute("data-lines", String(lines.length));
    if (k.fused.length && k.post_graph !== null && k.post_graph !== undefined) {
      const b = el("button", { class: "cs-link", "data-link": "fused" }, `show its ${k.fused.length} post-grad nodes in the graph`);
      b.onclick = () => links.openGraph(choice.index, k.post_graph, k.fused);
      kernelShow.appendChild(b);
      kernelShow.appendChild(el("div", { class: "cs-muted" }, `fuses: ${k.fused.join(", ")}`));
    } else {
      kernelShow.appendChild(el("div", { class: "cs-muted" }, "no provenance recorded for this kernel"));
    }
    if (lines.length) kernelShow.appendChild(el("div", { class: "cs-muted" }, `from lines: ${lines.map((l) => formatLocation(l, cellOf)).join(", ")}`));
    if (k.aten.length) kernelShow.appendChild(el("div", { class: "cs-muted" }, `ATen ops: ${k.aten.join(", ")}`));
    launchDetails(kernelShow, k);
    kernelShow.appendChild(highlight(k.source || "(an extern call: no generated source)"));
    irDetails(kernelShow, k);
  }
  function openKernel(ci, name) {
    choice.set(ci);
    links.showTab("code");
    const k = data.compiles[ci].kernels.find((x) => x.name === name);
    if (k) showKernel(data.compiles[ci], k);
  }
  return { openKernel, dispose: () => { if (columns) columns.dispose(); } };
}
