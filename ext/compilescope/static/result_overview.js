// The result view's overview tab: the findings first, then ranks of a job, one row per compile
// id, torch's graph-break messages (folded, once per message), fallbacks to eager, recompiles and
// failures, what torch said, and the stages chart.

import { fitColumns } from "./columns.js";
import { el } from "./dom.js";
import { renderFindings } from "./findings.js";
import { formatCell } from "./format.js";

// torch's warnings of the cell, each once, with a link to the compile id it was said in.
function renderSaid(data, openCompile) {
  const n = data.messages.length;
  const said = el("details", { class: "cs-said", "data-said": String(n) });
  said.open = true;
  said.appendChild(el("summary", {}, `torch said (${n} warning${n > 1 ? "s" : ""})`));
  for (const m of data.messages) {
    const row = el("div", { class: "cs-said-item" });
    const ci = data.compiles.findIndex((c) => c.id === m.compile_id);
    if (ci >= 0) {
      const link = el("button", { class: "cs-link", "data-link": "compile" }, m.compile_id);
      link.style.display = "inline";
      link.onclick = () => openCompile(ci);
      row.appendChild(link);
    } else if (m.compile_id) row.appendChild(el("span", {}, `[${m.compile_id}] `));
    row.appendChild(el("span", { class: "cs-muted" }, ` ${m.origin} ${m.where}${m.count > 1 ? ` (${m.count} times)` : ""}`));
    row.appendChild(el("pre", {}, m.text));
    said.appendChild(row);
  }
  return said;
}

// The compile table's columns that fold first in a narrow pane (columns.js), lowest priority
// first: the status stays, second from the left.
const COMPILE_FOLD = [["activations", "activations for bwd"], ["ops", "ops per stage"], ["kernels", "kernels"], ["time", "compile time"]];

// One row per compile id as the user thinks of it: `0/0` and its restart `0/0_1` (tlparse's
// attempt suffix) fold into the last attempt's row, which names the earlier ones.
function foldRestarts(compiles) {
  const rows = [], byBase = new Map();
  compiles.forEach((c, ci) => {
    const m = /^(.*\/\d+)_(\d+)$/.exec(c.id);
    const base = m ? m[1] : c.id;
    const row = byBase.get(base);
    if (row && m) { row.earlier.push(compiles[row.ci]); row.ci = ci; return; }
    const fresh = { ci, earlier: [] };
    byBase.set(base, fresh);
    rows.push(fresh);
  });
  return rows;
}

// `openCompile(ci)`: shows compile id `ci` in the Graphs tab. Returns the table's box and its
// fitted columns.
function compileTable(data, openCompile) {
  const table = el("table", { class: "cs-table cs-compiles" });
  const hr = el("tr");
  const heads = [["id", "compile id"], ["status", "status"], ["frame", "frame"], ["ops", "ops per stage"], ["kernels", "kernels"], ["activations", "activations for bwd"], ["time", "compile time"]];
  for (const [key, h] of heads) hr.appendChild(el("th", { "data-col": key }, h));
  table.appendChild(hr);
  // Ops are counted of the graphs torch logged, not of the ones the view draws (the partition).
  const drawnHere = new Set((data.stages || []).filter((s) => !s.logged).map((s) => s.kind));
  for (const { ci, earlier } of foldRestarts(data.compiles)) {
    const c = data.compiles[ci];
    const tr = el("tr", { "data-compile": c.id, "data-attempts": [...earlier.map((e) => e.id), c.id].join(" ") });
    const idButton = el("button", { class: "cs-link" }, c.id);
    idButton.onclick = () => openCompile(ci);
    const td = el("td", { class: "cs-nowrap", "data-col": "id" }); td.appendChild(idButton); tr.appendChild(td);
    if (earlier.length) {
      // Dynamo restarted the frame's analysis: the earlier attempts made nothing of their own.
      const why = (c.restarts || []).map((r) => String(r).split("\n")[0]).join("; ");
      td.appendChild(el("span", { class: "cs-muted cs-restart", title: `Dynamo restarted ${earlier.map((e) => e.id).join(", ")} and compiled again as ${c.id}${why ? `: ${why}` : ""}` }, ` \u21bb ${earlier.map((e) => e.id).join(", ")}`));
    }
    // A compile its log ends inside: its counts are of what was read (trace/reader.py).
    const status = el("td", { class: "cs-nowrap", "data-col": "status" }, c.status);
    if (c.incomplete) status.appendChild(el("span", { class: "cs-warn", "data-incomplete": "", title: c.incomplete }, " incomplete"));
    tr.appendChild(status);
    const f = c.frame;
    // "cell [2]" in one line: a narrow output must not break it in two. A longer label
    // ("torch's step called at cell [2] line 5") wraps between words, never inside "cell [2]
    // line 5", and leaves the stage counts room.
    if (f.cell !== null) tr.appendChild(el("td", { class: "cs-nowrap", "data-col": "frame" }, formatCell(f.cell)));
    else tr.appendChild(el("td", { class: "cs-frame", "data-col": "frame" }, (f.label || "").replace(/cell \[(\d+)\] line (\d+)/g, "cell\u00a0[$1]\u00a0line\u00a0$2")));
    tr.appendChild(el("td", { class: "cs-ops", "data-col": "ops" }, c.stages.filter((s) => !drawnHere.has(s.kind)).map((s) => `${s.label} ${s.ops}`).join(", ")));
    tr.appendChild(el("td", { "data-col": "kernels" }, c.kernels.length || ""));
    tr.appendChild(el("td", { "data-col": "activations" }, c.partition ? `${c.activation_text} (${c.saved_text} saved)` : ""));
    // Each attempt's own time (torch gives it to one of them): together, the frame's.
    const times = [...earlier, c].map((x) => x.compile_s).filter((t) => t !== null && t !== undefined);
    tr.appendChild(el("td", { class: "cs-nowrap", "data-col": "time" }, times.length ? `${times.reduce((a, t) => a + t, 0).toFixed(2)} s` : ""));
    table.appendChild(tr);
  }
  // A narrow output folds the lowest columns first, and scrolls sideways when they are shown.
  const scroll = el("div", { class: "cs-scroll-x", "data-table": "compiles" });
  scroll.appendChild(table);
  return { scroll, columns: fitColumns(scroll, table, COMPILE_FOLD) };
}

// torch's own graph-break messages for breaks no finding covers (a finding carries its cause's
// message once, folded): one click away, each message once.
function renderRawBreaks(p, data, showLine) {
  const covered = new Set();
  for (const f of data.findings || []) {
    if (f.message) for (const id of f.compile_ids) covered.add(id);
  }
  const byReason = new Map();
  data.compiles.forEach((c) => {
    if (covered.has(c.id)) return;
    for (const b of c.breaks) {
      if (!byReason.has(b.reason)) byReason.set(b.reason, { ids: [], loc: b.loc, cell: b.cell });
      byReason.get(b.reason).ids.push(c.id);
    }
  });
  const total = [...byReason.values()].reduce((n, r) => n + r.ids.length, 0);
  if (!total) return;
  const box = el("details", { class: "cs-raw-breaks", "data-breaks": String(total) });
  box.appendChild(el("summary", {}, `graph breaks: ${total} in ${byReason.size} message${byReason.size > 1 ? "s" : ""} (torch's text)`));
  for (const [reason, r] of byReason) {
    const where = r.loc ? (r.cell !== null ? ` at ${formatCell(r.cell, r.loc[1])}` : ` at ${r.loc[0]}:${r.loc[1]}`) : "";
    const div = el("div", { class: "cs-break" });
    div.appendChild(el("div", { class: "cs-warn" }, `graph break in ${r.ids.join(", ")}${where}`));
    div.appendChild(el("pre", { class: "cs-pre" }, reason));
    if (r.loc) div.onclick = () => showLine(r.loc[0], r.loc[1]);
    box.appendChild(div);
  }
  p.appendChild(box);
}

// Where Dynamo left code to eager instead of breaking the graph (a whole frame, or its rest after
// a break it cannot resume from): not counted among the graph breaks, as Dynamo counts none.
function renderFallbacks(p, data, showLine) {
  const rows = [];
  data.compiles.forEach((c) => { for (const f of c.fallbacks || []) rows.push([c.id, f]); });
  if (!rows.length) return;
  const box = el("details", { class: "cs-raw-breaks", "data-fallbacks": String(rows.length) });
  box.appendChild(el("summary", {}, `fallbacks to eager: ${rows.length} (not graph breaks; torch's text)`));
  for (const [id, f] of rows) {
    const where = f.loc ? (f.cell !== null ? ` at ${formatCell(f.cell, f.loc[1])}` : ` at ${f.loc[0]}:${f.loc[1]}`) : "";
    const div = el("div", { class: "cs-break" });
    div.appendChild(el("div", { class: "cs-warn" }, `${id}: ${f.what}${where}`));
    div.appendChild(el("pre", { class: "cs-pre" }, f.reason));
    if (f.loc) div.onclick = () => showLine(f.loc[0], f.loc[1]);
    box.appendChild(div);
  }
  p.appendChild(box);
}

// `links`: openCompile(ci) (its graphs), showLine(file, line) (in the cell pane); `actions`: see
// result.js. Returns what the view must undo when it goes: { dispose }.
export function renderOverview(p, data, links, actions) {
  const { openCompile, showLine } = links;
  renderFindings(p, data, showLine, actions);
  // Several ranks of a job: which agree, and where each group parts from the others.
  if (data.ranks_html) {
    const holder = el("div", { class: "cs-rank-report" });
    holder.innerHTML = data.ranks_html; // built and escaped in Python (views/ranks_html.py)
    p.appendChild(holder);
  }
  // No compile ids: a plain sentence in place of a table with a head and no rows.
  let columns = null;
  if (data.compiles.length) {
    const table = compileTable(data, openCompile);
    // The capture's compile time (cold or warm) and its pay-back, over the table of its parts.
    if (data.compile_line) p.appendChild(el("div", { class: "cs-muted", "data-compile-time": "" }, data.compile_line));
    p.appendChild(table.scroll);
    columns = table.columns;
  } else p.appendChild(el("p", { class: "cs-empty", "data-no-compiles": "" }, data.nothing_compiled || "no compile ids in this capture."));
  renderRawBreaks(p, data, showLine);
  renderFallbacks(p, data, showLine);
  data.compiles.forEach((c) => {
    for (const r of c.recompiles) p.appendChild(el("div", {}, `${c.id} recompiled: ${r}`));
    // A frame Dynamo skipped at a break is shown among the fallbacks, not as a failure.
    if (c.failure && !(c.fallbacks || []).some((f) => f.scope === "frame")) p.appendChild(el("pre", { class: "cs-pre cs-warn" }, `${c.id} failed: ${c.failure}`));
  });
  // What torch said during the cell, once, by compile id (not as stderr under the view).
  if (data.messages && data.messages.length) p.appendChild(renderSaid(data, openCompile));
  if (data.charts && data.charts.stages) {
    const holder = el("div", { class: "cs-chart", "data-chart": "stages" });
    holder.innerHTML = data.charts.stages; // matplotlib's SVG, text escaped (views/figures.py)
    p.appendChild(holder);
  }
  return { dispose: () => { if (columns) columns.dispose(); } };
}
