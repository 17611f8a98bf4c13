// The result view's graphs tab: one button per stage of the chosen compile id, an explorer per
// graph (made when first shown, then kept) right under them, then the partition's saved tensors
// and recomputed nodes (folded) and the graph as torch printed it. Returns openGraph, which the
// other tabs link to, redraw (the shown explorer, after its pane changed size) and dispose.

import { el } from "./dom.js";
import { createExplorer } from "./explorer.js";
import { renderPartition } from "./partition.js";
import { highlight } from "./text.js";

// `choice`: the chosen compile id (result.js); `links`: openKernel(ci, name), showLine(file, line)
// (in the cell pane), showTab(key).
export function renderGraphs(pane, data, choice, links) {
  // Which stages show the partition's saved tensors, and which is the partition: the payload's
  // table of stages says (common.py), an older saved view's has none.
  const stages = data.stages || [];
  const savedStages = new Set(stages.filter((s) => s.saved).map((s) => s.kind));
  const partitionKind = (stages.find((s) => !s.logged) || {}).kind;
  const explorers = new Map();
  let shown = null; // the explorer on show
  const stageBar = el("div", { class: "cs-stagebar" });
  const graphArea = el("div", { class: "cs-grapharea" });
  // The explorer first under the stage buttons; what the partition saved and recomputes
  // below it, each folded to one line with its counts (partition.js).
  const savedBox = el("div", { class: "cs-saved" });
  const textBox = el("details", { class: "cs-text" });
  textBox.style.display = "none";
  const onCompile = () => renderStages();
  pane.append(choice.select(onCompile), stageBar, graphArea, savedBox, textBox);
  let stageIndex = 0;
  function renderStages() {
    const c = data.compiles[choice.index];
    stageBar.textContent = "";
    c.stages.forEach((st) => {
      const b = el("button", { class: "cs-btn cs-stage", "data-stage": st.kind, "data-graph": String(st.graph) }, `${st.label} (${st.nodes})`);
      b.onclick = () => openGraph(choice.index, st.graph);
      stageBar.appendChild(b);
    });
    if (!c.stages.length) stageBar.appendChild(el("span", { class: "cs-muted" }, "no graphs were logged for this compile id"));
    else openGraph(choice.index, c.stages[Math.min(stageIndex, c.stages.length - 1)].graph, null, true);
  }
  function explorerFor(ci, graphIndex) {
    let ex = explorers.get(graphIndex);
    if (!ex) {
      const holder = el("div", {});
      graphArea.appendChild(holder);
      ex = createExplorer(holder, data.graphs[graphIndex], {
        onKernel: (name) => links.openKernel(ci, name),
        onLine: (file, ln) => links.showLine(file, ln),
        inCell: (file) => data.cells.some((cell) => cell.file === file),
      });
      explorers.set(graphIndex, ex);
    }
    return ex;
  }
  function openGraph(ci, graphIndex, names, quiet) {
    if (ci !== choice.index) { choice.mark(ci, onCompile); renderStages(); }
    const c = data.compiles[ci];
    const st = c.stages.find((s) => s.graph === graphIndex);
    stageIndex = c.stages.indexOf(st);
    for (const b of stageBar.children) b.classList.toggle("cs-on", b.getAttribute("data-graph") === String(st.graph));
    for (const ex of explorers.values()) ex.root.style.display = "none";
    const ex = explorerFor(ci, graphIndex);
    ex.root.style.display = "";
    shown = ex;
    textBox.textContent = "";
    textBox.style.display = st.text ? "" : "none";
    if (st.text) { textBox.appendChild(el("summary", {}, "graph as torch printed it")); textBox.appendChild(highlight(st.text)); }
    renderSaved(c, st);
    if (!quiet) links.showTab("graphs");
    ex.redraw();
    if (names) ex.highlightNames(names);
  }
  function renderSaved(c, st) {
    savedBox.textContent = "";
    if (!c.partition || !savedStages.has(st.kind)) return;
    renderPartition(savedBox, c, (s) => {
      const part = partitionKind && c.stages.find((x) => x.kind === partitionKind);
      if (part) openGraph(choice.index, part.graph, [`fw.${s.name}`, ...s.users.map((u) => `bw.${u}`)]);
      else if (shown) shown.highlightNames([s.name, ...s.users]);
    });
  }
  return {
    openGraph,
    redraw: () => { if (shown) shown.redraw(); },
    dispose: () => { for (const ex of explorers.values()) ex.dispose(); },
  };
}
