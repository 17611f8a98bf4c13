// The result view's cell pane: the cell's lines, each marked by what it became (graph nodes,
// kernels, graph breaks), and for a clicked line the links to those nodes and kernels.
// Returns showLine and markLines, which the other tabs link to.

import { el } from "./dom.js";
import { formatCell } from "./format.js";

// What each line became, in every compile: nodes per stage, kernels, graph breaks.
function linesByLocation(data) {
  const byLine = new Map();
  const entry = (file, ln) => {
    const key = `${file}:${ln}`;
    if (!byLine.has(key)) byLine.set(key, { nodes: [], kernels: [], breaks: [] });
    return byLine.get(key);
  };
  data.compiles.forEach((c, ci) => {
    for (const st of c.stages) for (const [file, lines] of Object.entries(st.lines)) for (const [ln, names] of Object.entries(lines)) entry(file, ln).nodes.push([ci, st, names]);
    for (const k of c.kernels) for (const loc of k.lines) if (loc) entry(loc[0], loc[1]).kernels.push([ci, k]);
    for (const b of c.breaks) if (b.loc) entry(b.loc[0], b.loc[1]).breaks.push([ci, b]);
  });
  return byLine;
}

// `links`: openGraph(ci, graph, names), openKernel(ci, name), unfold() (the folded listing).
export function renderCellPane(cellPane, data, links) {
  const lineEls = new Map(); // "file:line" -> element
  const linkBox = el("div", { class: "cs-links" });
  for (const cell of data.cells) {
    const box = el("div", { class: "cs-cell" });
    box.appendChild(el("div", { class: "cs-muted" }, cell.cell !== null ? formatCell(cell.cell) : cell.file));
    cell.text.split("\n").forEach((text, i) => {
      const n = i + 1;
      const row = el("div", { class: "cs-line", "data-line": String(n) });
      row.append(el("span", { class: "cs-ln" }, String(n)), el("span", {}, text || " "));
      row.onclick = () => showLine(cell.file, n);
      lineEls.set(`${cell.file}:${n}`, row);
      box.appendChild(row);
    });
    cellPane.appendChild(box);
  }
  cellPane.appendChild(linkBox);
  const byLine = linesByLocation(data);
  for (const [key, e] of byLine) {
    const row = lineEls.get(key);
    if (!row) continue;
    if (e.breaks.length) row.classList.add("cs-line-break");
    if (e.nodes.length) row.classList.add("cs-line-nodes");
    if (e.kernels.length) row.classList.add("cs-line-kernels");
  }
  function markLines(locs) {
    for (const row of lineEls.values()) row.classList.remove("cs-line-hl");
    for (const loc of locs) { const row = loc && lineEls.get(`${loc[0]}:${loc[1]}`); if (row) row.classList.add("cs-line-hl"); }
  }
  function showLine(file, n) {
    markLines([[file, n]]);
    // Seen where it is: the listing unfolds and scrolls to the line.
    links.unfold();
    const row = lineEls.get(`${file}:${n}`);
    if (row) row.scrollIntoView({ block: "nearest" });
    linkBox.textContent = "";
    const e = byLine.get(`${file}:${n}`);
    linkBox.appendChild(el("div", { class: "cs-muted" }, `line ${n}`));
    if (!e) { linkBox.appendChild(el("div", {}, "nothing compiled came from this line")); return; }
    for (const [ci, b] of e.breaks) linkBox.appendChild(el("div", { class: "cs-warn" }, `graph break (${data.compiles[ci].id}): ${b.reason}`));
    for (const [ci, st, names] of e.nodes) {
      const a = el("button", { class: "cs-link", "data-link": "nodes" }, `${data.compiles[ci].id} ${st.label}: ${names.length} node${names.length > 1 ? "s" : ""}`);
      a.title = names.join(", ");
      a.onclick = () => links.openGraph(ci, st.graph, names);
      linkBox.appendChild(a);
    }
    for (const [ci, k] of e.kernels) {
      const a = el("button", { class: "cs-link", "data-link": "kernel" }, `${data.compiles[ci].id} kernel ${k.name}`);
      a.onclick = () => links.openKernel(ci, k.name);
      linkBox.appendChild(a);
    }
  }
  return { showLine, markLines };
}
