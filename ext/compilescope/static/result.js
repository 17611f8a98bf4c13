// The result view: overview, every stage's graph, kernels, cell, guards, timings, repros, diff.
// Cross-links: cell line <-> graph nodes <-> kernels <-> saved tensors. Text goes in through
// textContent only; innerHTML only for markup Python built with every string escaped: matplotlib's
// SVG charts and sympy's MathML.
//
// This module draws the frame (head, cell pane, tabs, compile selectors) and hands each tab to
// its module. They share one context: the data, the chosen compile id, the shown explorer, and
// the cross-links each tab owns (showTab here; showLine, markLines in result_cell.js; openGraph
// in result_graphs.js; openKernel in result_code.js), all set before anything is clicked.

import { renderDiff } from "./diff.js";
import { el } from "./dom.js";
import { renderCellPane } from "./result_cell.js";
import { renderCode } from "./result_code.js";
import { renderGraphs } from "./result_graphs.js";
import { renderGuards } from "./result_guards.js";
import { renderOverview } from "./result_overview.js";
import { renderRepro } from "./result_repro.js";
import { renderTimings } from "./timings.js";

const TABS = [["overview", "Overview"], ["graphs", "Graphs"], ["code", "Code"], ["guards", "Guards & shapes"], ["timings", "Timings"], ["repro", "Repro"]];

function renderHead(root, data) {
  const head = el("div", { class: "cs-head" });
  head.appendChild(el("b", {}, "compilescope"));
  let line = ` ${data.compiles.length} compile ids on ${data.device}`;
  if (data.torch) line += `, torch ${data.torch}`;
  if (data.source && data.source !== "live") line += ` \u00b7 from ${data.source}`;
  head.appendChild(document.createTextNode(line));
  root.appendChild(head);
  if (data.partial) root.appendChild(el("div", { class: "cs-warn", "data-partial": "1" }, `PARTIAL: ${data.partial}; what compiled before is shown`));
  for (const s of data.skipped) root.appendChild(el("div", { class: "cs-muted" }, `skipped ${s.count}: ${s.reason}`));
  // The capture's own note (why nothing compiled, say), over every tab.
  if (data.note) root.appendChild(el("div", { class: "cs-note", "data-capture-note": "" }, data.note));
}

// A capture with no compile ids (code compiled before it began, or nothing compiled): the tabs
// that show one compile id at a time say so instead (views/summary_html.py words it).
function nothingCompiled(data) {
  return el("p", { class: "cs-empty", "data-no-compiles": "" }, data.nothing_compiled || "no compile ids in this capture.");
}

// The context the tabs share, with the compile selector that graphs, code, guards and repro show.
function resultContext(data) {
  const cellOf = {};
  for (const cell of data.cells) cellOf[cell.file] = cell.cell;
  // Start on the biggest compile: restarts and empty compile ids have nothing to draw.
  const biggest = data.compiles.reduce((best, c, i) => (c.stages.length && (best < 0 || c.stages[0].nodes > data.compiles[best].stages[0].nodes) ? i : best), -1);
  const ctx = {
    data,
    cellOf,
    compileIndex: biggest < 0 ? 0 : biggest,
    activeExplorer: null,
    selectors: [],
    compileSelect(onChange) {
      const s = el("select", { class: "cs-select" });
      data.compiles.forEach((c, i) => s.appendChild(el("option", { value: String(i) }, `${c.id} ${c.frame.label || c.frame.function || ""}`)));
      s.onchange = () => ctx.setCompile(Number(s.value));
      ctx.selectors.push([s, onChange]);
      return s;
    },
    setCompile(i) {
      ctx.compileIndex = i;
      for (const [s, cb] of ctx.selectors) { s.value = String(i); cb(); }
    },
  };
  return ctx;
}

// The cell pane (foldable) beside the tabs' column.
function renderLayout(root, ctx) {
  const main = el("div", { class: "cs-main" });
  const cellPane = el("div", { class: "cs-cellpane" });
  const fold = el("button", { class: "cs-fold", title: "fold or unfold the cell listing" }, "\u00ab cell");
  cellPane.appendChild(fold);
  const setFolded = (on) => {
    cellPane.classList.toggle("cs-folded", on);
    fold.textContent = on ? "cell \u00bb" : "\u00ab cell";
    if (ctx.activeExplorer) ctx.activeExplorer.redraw();
  };
  fold.onclick = (ev) => { ev.stopPropagation(); setFolded(!cellPane.classList.contains("cs-folded")); };
  cellPane.addEventListener("click", () => { if (cellPane.classList.contains("cs-folded")) setFolded(false); });
  const right = el("div", { class: "cs-right" });
  if (ctx.data.cells.length) main.appendChild(cellPane);
  main.appendChild(right);
  root.appendChild(main);
  return { cellPane, right, setFolded };
}

function renderTabs(right, ctx) {
  const tabBar = el("div", { class: "cs-tabs", role: "tablist" });
  const panes = {};
  const tabNames = [...TABS];
  if (ctx.data.diff) tabNames.push(["diff", "Diff"]);
  for (const [key, label] of tabNames) {
    const b = el("button", { class: "cs-tab", "data-tab": key, role: "tab" }, label);
    b.onclick = () => ctx.showTab(key);
    tabBar.appendChild(b);
    panes[key] = el("div", { class: "cs-pane", "data-pane": key });
  }
  right.appendChild(tabBar);
  for (const p of Object.values(panes)) right.appendChild(p);
  ctx.showTab = (key) => {
    for (const [k, p] of Object.entries(panes)) p.style.display = k === key ? "" : "none";
    for (const b of tabBar.children) b.classList.toggle("cs-on", b.getAttribute("data-tab") === key);
    if (key === "graphs" && ctx.activeExplorer) ctx.activeExplorer.redraw();
  };
  return panes;
}

// Narrow outputs start with the listing folded, so the graph keeps a useful width; decided
// once, when the output first has a width (a widget is drawn before it is on the page).
function foldWhenNarrow(root, data, setFolded) {
  const decideFold = (width) => { if (data.cells.length && width < 1100) setFolded(true); };
  if (root.clientWidth) decideFold(root.clientWidth);
  else if (window.ResizeObserver) {
    const watch = new ResizeObserver(() => { if (root.clientWidth) { watch.disconnect(); decideFold(root.clientWidth); } });
    watch.observe(root);
  }
}

// `actions`, where a kernel is connected (the widget): tryFix(number), trial(), onTrial(cb).
export function renderResult(host, data, actions) {
  const root = el("div", { class: "cs-root" });
  host.appendChild(root);
  renderHead(root, data);
  const ctx = resultContext(data);
  const { cellPane, right, setFolded } = renderLayout(root, ctx);
  ctx.unfoldCell = () => setFolded(false);
  const panes = renderTabs(right, ctx);
  renderCellPane(ctx, cellPane);
  renderOverview(ctx, panes.overview, actions);
  if (data.compiles.length) {
    renderGraphs(ctx, panes.graphs);
    renderCode(ctx, panes.code);
    renderGuards(ctx, panes.guards);
    renderRepro(ctx, panes.repro);
  } else {
    for (const key of ["graphs", "code", "guards", "repro"]) panes[key].appendChild(nothingCompiled(data));
    // Nothing to open: the cross-links (from the cell pane, findings, timings) lead nowhere.
    ctx.openGraph = () => ctx.showTab("graphs");
    ctx.openKernel = () => ctx.showTab("code");
  }
  renderTimings(panes.timings, data, ctx.openKernel);
  if (data.diff) renderDiff(panes.diff, data.diff);

  for (const [s, cb] of ctx.selectors) { s.value = String(ctx.compileIndex); cb(); }
  ctx.showTab("overview");
  foldWhenNarrow(root, data, setFolded);
  root.setAttribute("data-ready", "1");
  return { showTab: ctx.showTab, openKernel: ctx.openKernel, showLine: ctx.showLine, openGraph: ctx.openGraph };
}
