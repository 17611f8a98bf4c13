// The result view: overview, every stage's graph, kernels, cell, guards, timings, repros, diff.
// Cross-links: cell line <-> graph nodes <-> kernels <-> saved tensors. Text goes in through
// textContent only; innerHTML only for markup Python built with every string escaped: matplotlib's
// SVG charts and sympy's MathML.
//
// This module draws the frame (head, cell pane, tabs, compile selectors) and hands each tab to
// its module. Each tab's render returns the links it owns (showTab here; showLine, markLines
// from result_cell.js; openGraph from result_graphs.js; openKernel from result_code.js) and its
// dispose; the links are passed to the tabs that use them, by name. The tabs share one state:
// the chosen compile id (compileChoice).

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

// The chosen compile id, which graphs, code, guards and repro show, each with its selector.
function compileChoice(data) {
  // Start on the biggest compile: restarts and empty compile ids have nothing to draw.
  const biggest = data.compiles.reduce((best, c, i) => (c.stages.length && (best < 0 || c.stages[0].nodes > data.compiles[best].stages[0].nodes) ? i : best), -1);
  let index = biggest < 0 ? 0 : biggest;
  const selectors = [];
  const choice = {
    get index() { return index; },
    // A selector for a tab; `onChange` redraws the tab for the chosen compile id.
    select(onChange) {
      const s = el("select", { class: "cs-select" });
      data.compiles.forEach((c, i) => s.appendChild(el("option", { value: String(i) }, `${c.id} ${c.frame.label || c.frame.function || ""}`)));
      s.onchange = () => choice.set(Number(s.value));
      selectors.push([s, onChange]);
      return s;
    },
    set(i) {
      index = i;
      for (const [s, cb] of selectors) { s.value = String(i); cb(); }
    },
    // Chosen by a tab that draws it itself (the graphs tab opening another compile's graph):
    // every other tab is redrawn for it, so Code, Guards and Repro show what their selector says.
    mark(i, self) {
      index = i;
      for (const [s, cb] of selectors) { s.value = String(i); if (cb !== self) cb(); }
    },
  };
  return choice;
}

// The cell pane (foldable) beside the tabs' column.
function renderLayout(root, data, redraw) {
  const main = el("div", { class: "cs-main" });
  const cellPane = el("div", { class: "cs-cellpane" });
  const fold = el("button", { class: "cs-fold", title: "fold or unfold the cell listing" }, "\u00ab cell");
  cellPane.appendChild(fold);
  const setFolded = (on) => {
    cellPane.classList.toggle("cs-folded", on);
    fold.textContent = on ? "cell \u00bb" : "\u00ab cell";
    redraw();
  };
  fold.onclick = (ev) => { ev.stopPropagation(); setFolded(!cellPane.classList.contains("cs-folded")); };
  cellPane.addEventListener("click", () => { if (cellPane.classList.contains("cs-folded")) setFolded(false); });
  const right = el("div", { class: "cs-right" });
  if (data.cells.length) main.appendChild(cellPane);
  main.appendChild(right);
  root.appendChild(main);
  return { cellPane, right, setFolded };
}

// Returns the panes by key and showTab(key); `onGraphs` runs when the graphs tab is shown.
function renderTabs(right, data, onGraphs) {
  const tabBar = el("div", { class: "cs-tabs", role: "tablist" });
  const panes = {};
  const tabNames = [...TABS];
  if (data.diff) tabNames.push(["diff", "Diff"]);
  for (const [key, label] of tabNames) {
    const b = el("button", { class: "cs-tab", "data-tab": key, role: "tab" }, label);
    b.onclick = () => showTab(key);
    tabBar.appendChild(b);
    panes[key] = el("div", { class: "cs-pane", "data-pane": key });
  }
  right.appendChild(tabBar);
  for (const p of Object.values(panes)) right.appendChild(p);
  function showTab(key) {
    for (const [k, p] of Object.entries(panes)) p.style.display = k === key ? "" : "none";
    for (const b of tabBar.children) b.classList.toggle("cs-on", b.getAttribute("data-tab") === key);
    if (key === "graphs") onGraphs();
  }
  return { panes, showTab };
}

// Narrow outputs start with the listing folded, so the graph keeps a useful width; decided
// once, when the output first has a width (a widget is drawn before it is on the page).
// Returns a function that stops waiting for it.
function foldWhenNarrow(root, data, setFolded) {
  const decideFold = (width) => { if (data.cells.length && width < 1100) setFolded(true); };
  if (root.clientWidth) decideFold(root.clientWidth);
  else if (window.ResizeObserver) {
    const watch = new ResizeObserver(() => { if (root.clientWidth) { watch.disconnect(); decideFold(root.clientWidth); } });
    watch.observe(root);
    return () => watch.disconnect();
  }
  return () => {};
}

// `actions`, where a kernel is connected (the widget): tryFix(number), trial(), onTrial(cb).
// Returns the links (showTab, openKernel, showLine, openGraph) and dispose(), which removes what
// the view added outside its own elements (window listeners, resize observers).
export function renderResult(host, data, actions) {
  const root = el("div", { class: "cs-root" });
  host.appendChild(root);
  renderHead(root, data);
  const choice = compileChoice(data);
  // The tabs link to each other both ways: each link calls the tab that owns it, once drawn
  // (every tab is drawn below, before anything can be clicked).
  let cell = null, graphs = null, code = null;
  const openGraph = (ci, graphIndex, names) => graphs.openGraph(ci, graphIndex, names);
  const openKernel = (ci, name) => code.openKernel(ci, name);
  const showLine = (file, n) => cell.showLine(file, n);
  const markLines = (locs) => cell.markLines(locs);
  const redraw = () => { if (graphs) graphs.redraw(); };
  const { cellPane, right, setFolded } = renderLayout(root, data, redraw);
  const { panes, showTab } = renderTabs(right, data, redraw);
  const openCompile = (ci) => { choice.set(ci); showTab("graphs"); };
  cell = renderCellPane(cellPane, data, { openGraph, openKernel, unfold: () => setFolded(false) });
  const overview = renderOverview(panes.overview, data, { openCompile, showLine }, actions);
  if (data.compiles.length) {
    graphs = renderGraphs(panes.graphs, data, choice, { openKernel, showLine, showTab });
    code = renderCode(panes.code, data, choice, { openGraph, markLines, showTab });
    renderGuards(panes.guards, data, choice);
    renderRepro(panes.repro, data, choice);
  } else {
    for (const key of ["graphs", "code", "guards", "repro"]) panes[key].appendChild(nothingCompiled(data));
    // Nothing to open: the cross-links (from the cell pane, findings, timings) lead nowhere.
    graphs = { openGraph: () => showTab("graphs"), redraw() {}, dispose() {} };
    code = { openKernel: () => showTab("code"), dispose() {} };
  }
  const timings = renderTimings(panes.timings, data, openKernel);
  if (data.diff) renderDiff(panes.diff, data.diff);

  choice.set(choice.index);
  showTab("overview");
  const stopFolding = foldWhenNarrow(root, data, setFolded);
  root.setAttribute("data-ready", "1");
  const dispose = () => {
    for (const tab of [overview, graphs, code, timings]) tab.dispose();
    stopFolding();
  };
  return { showTab, openKernel, showLine, openGraph, dispose };
}
