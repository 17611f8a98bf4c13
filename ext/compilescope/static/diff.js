// The diff tab: compile ids and graph breaks added or gone, nodes per stage, kernel source diffs,
// times side by side, and first whether the user's real steps got faster (the verdict comes from
// the model: a slower or noisy result reads so here too). Every string goes in through textContent (el).

import { el } from "./dom.js";

function diffSeconds(s, scale, unit) {
  return s === null || s === undefined ? "not measured" : `${(s * scale).toFixed(3)} ${unit}`;
}

function diffLines(lines) {
  const pre = el("pre", { class: "cs-code cs-diff-src" });
  for (const line of lines) {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "cs-diff-file"
      : line.startsWith("@@") ? "cs-diff-hunk"
      : line.startsWith("+") ? "cs-diff-added"
      : line.startsWith("-") ? "cs-diff-removed" : "";
    pre.appendChild(el("span", cls ? { class: cls } : {}, line + "\n"));
  }
  return pre;
}

function diffTimes(title, rows, scale, unit, warmth = []) {
  // A compile time says cold or warm beside it (what a cache hit means for the figure).
  const said = (v, w) => (w ? `${v} (${w})` : v);
  rows = rows.map((r, i) => [r[0], r[1], r[2], ...(warmth[i] || ["", ""])]);
  const shown = rows.filter((r) => r[1] !== null || r[2] !== null);
  if (!shown.length) return null;
  const t = el("table", { class: "cs-table", "data-diff-times": title });
  const head = el("tr");
  for (const h of ["compile id", `${title} before`, "after", "after / before"]) head.appendChild(el("th", {}, h));
  t.appendChild(head);
  for (const [cid, a, b, wa, wb] of shown) {
    const tr = el("tr");
    const ratio = a && b ? `${(b / a).toFixed(2)}x` : "";
    for (const v of [cid, said(diffSeconds(a, scale, unit), wa), said(diffSeconds(b, scale, unit), wb), ratio]) tr.appendChild(el("td", {}, v));
    t.appendChild(tr);
  }
  return t;
}

export function renderDiff(pane, d) {
  pane.appendChild(el("p", { "data-diff-same": d.same ? "1" : "0" },
    d.same ? "No differences in compile ids, graph breaks, graphs or kernels." : "Differences from the earlier capture (before -> this one):"));
  const speedup = d.step_speedup;
  if (speedup) {
    pane.appendChild(el("p", { class: "cs-step-speedup", "data-verdict": speedup.verdict }, `Real steps: ${speedup.text}`));
  }
  const list = el("ul");
  const item = (sign, what, text, attr) => {
    const li = el("li", { class: sign === "+" ? "cs-diff-added" : "cs-diff-removed", [attr]: sign }, `${sign} ${what} ${text}`);
    list.appendChild(li);
  };
  for (const c of d.compiles_added) item("+", "compile", c, "data-diff-compile");
  for (const c of d.compiles_removed) item("-", "compile", c, "data-diff-compile");
  for (const b of d.breaks_added) item("+", "graph break", b, "data-diff-break");
  for (const b of d.breaks_removed) item("-", "graph break", b, "data-diff-break");
  if (list.childNodes.length) pane.appendChild(list);

  if (d.graphs.length) pane.appendChild(el("h4", {}, "Graphs"));
  for (const g of d.graphs) {
    const box = el("details", { "data-diff-graph": g.kind });
    const [plus, minus, tilde] = g.counts;
    box.appendChild(el("summary", {}, `${g.compile} ${g.label}: ${g.before} -> ${g.after} nodes (+${plus} -${minus} ~${tilde})`));
    const t = el("table", { class: "cs-table" });
    const head = el("tr");
    for (const h of ["", "node", "before", "after"]) head.appendChild(el("th", {}, h));
    t.appendChild(head);
    for (const [change, name, before, after] of g.nodes) {
      const tr = el("tr", { class: `cs-diff-${change}`, "data-diff-node": name });
      const sign = change === "added" ? "+" : change === "removed" ? "-" : "~";
      for (const v of [sign, name, before, after]) tr.appendChild(el("td", {}, v));
      t.appendChild(tr);
    }
    box.appendChild(t);
    if (g.cut) box.appendChild(el("div", { class: "cs-muted" }, `${g.cut} more nodes changed, not listed`));
    pane.appendChild(box);
  }

  if (d.kernels.length) pane.appendChild(el("h4", {}, "Kernels"));
  for (const k of d.kernels) {
    const box = el("details", { "data-diff-kernel": k.name, "data-change": k.change });
    box.appendChild(el("summary", {}, `${k.compile} ${k.change}: ${k.name}`));
    box.appendChild(diffLines(k.diff));
    if (k.cut) box.appendChild(el("div", { class: "cs-muted" }, `${k.cut} more diff lines, not shown`));
    pane.appendChild(box);
  }

  const compile = diffTimes("compile time", d.times, 1, "s", d.warmth || []);
  const [ta, tb] = d.compile_totals || [null, null];
  if (ta !== null && tb !== null) {
    const [la, lb] = (d.compile_labels || ["", ""]).map((l) => (l ? ` (${l})` : ""));
    pane.appendChild(el("p", { "data-diff-compile-total": "" }, `Compile time ${ta.toFixed(2)} s${la} -> ${tb.toFixed(2)} s${lb}.`));
  }
  const runtime = diffTimes("compiled run (median)", d.runtimes, 1e3, "ms");
  if (compile || runtime) pane.appendChild(el("h4", {}, "Times"));
  for (const t of [compile, runtime]) if (t) pane.appendChild(t);
}
