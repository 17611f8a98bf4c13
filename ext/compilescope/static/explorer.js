// The graph explorer: draws one graph payload (views/explorer_data.py) on a canvas.
// Layout and the first picture's placement were computed in Python; expanding a group only
// places laid-out groups next to each other (placement.js), never runs a layout.
// This module holds the explorer's parts and state and decides which boxes and edges are
// visible; explorer_draw.js paints them, explorer_interact.js answers the mouse and the bar.
// Every string from the capture reaches the page through textContent or canvas fillText.

import { el } from "./dom.js";
import { createPainter } from "./explorer_draw.js";
import { bindInteraction } from "./explorer_interact.js";
import { edgeMiddle, placeBoxes, placedBoxes } from "./placement.js";

const BUTTONS = [["fit", "fit"], ["whole", "whole graph"], ["expand", "expand all"], ["collapse", "collapse all"],
  ["up", "ancestors"], ["down", "descendants"], ["clear", "clear"]];

// What the drawing needs to know of the graph beyond the payload: owners, users, group depths.
function prepare(g) {
  const n = g.names.length;
  const owner = new Int32Array(n);
  g.groups.forEach((grp, gid) => {
    grp.items.forEach((item) => { if (item >= 0) owner[item] = gid; });
  });
  const users = Array.from({ length: n }, () => []);
  g.in.forEach((ins, v) => ins.forEach((u) => users[u].push(v)));
  const depth = g.groups.map(() => 0);
  g.groups.forEach((grp, gid) => { if (gid > 0) depth[gid] = depth[grp.parent] + 1; });
  const byName = new Map(g.names.map((name, i) => [name, i]));
  return { n, owner, users, depth, byName };
}

// The explorer's elements: the bar (search, buttons), the canvas with its details and tip.
function buildParts(kind) {
  const root = el("div", { class: "cs-explorer", "data-cs-explorer": kind });
  const bar = el("div", { class: "cs-bar" });
  const search = el("input", { type: "search", placeholder: "search name, op, target", class: "cs-search" });
  const found = el("span", { class: "cs-found" });
  const buttons = {};
  for (const [key, label] of BUTTONS) {
    buttons[key] = el("button", { class: "cs-btn", "data-action": key }, label);
    bar.appendChild(buttons[key]);
  }
  bar.prepend(search, found);
  const body = el("div", { class: "cs-ex-body" });
  const canvas = el("canvas", { class: "cs-canvas" });
  // Hidden until a node is selected: the drawing has the whole width at first paint.
  const details = el("div", { class: "cs-details" });
  details.style.display = "none";
  body.append(canvas, details);
  const status = el("div", { class: "cs-ex-status" });
  root.append(bar, body, status);
  return { root, search, found, buttons, body, canvas, details, status };
}

export function createExplorer(container, g, opts) {
  opts = opts || {};
  const info = prepare(g);
  const ui = buildParts(g.kind);
  const { root, canvas, status } = ui;
  container.appendChild(root);

  // The state the drawing and the interaction share; boxes, edges and highlight are replaced.
  const s = {
    g, info,
    S: (i) => (i >= 0 ? g.strings[i] : ""),
    expanded: new Set(),
    highlight: new Set(),
    selected: -1,
    boxes: [], nodeBox: new Int32Array(info.n), rep: new Int32Array(info.n), edges: [],
    view: { k: 1, tx: 20, ty: 20 },
  };
  g.groups.forEach((grp, gid) => { if (grp.open) s.expanded.add(gid); });
  let firstPicture = true; // Python placed it (payload.placed); later ones come from placement.js
  ui.tip = el("div", { class: "cs-tip" });
  ui.tip.style.display = "none";
  ui.body.appendChild(ui.tip);

  // Which boxes are shown, which box stands for each node, and the edges between boxes.
  function rebuild() {
    const { nodeBox, rep } = s;
    s.boxes = firstPicture ? placedBoxes(g) : placeBoxes(g, s.expanded);
    firstPicture = false;
    nodeBox.fill(-1);
    const groupBox = new Map();
    s.boxes.forEach((b, i) => { if (b.kind === "node") nodeBox[b.id] = i; else groupBox.set(b.id, i); });
    for (let v = 0; v < info.n; v++) {
      if (nodeBox[v] >= 0) { rep[v] = nodeBox[v]; continue; }
      // The outermost closed group that holds the node stands for it.
      let gid = info.owner[v], closed = -1;
      while (gid > 0) { if (!s.expanded.has(gid)) closed = gid; gid = g.groups[gid].parent; }
      rep[v] = closed >= 0 && groupBox.has(closed) ? groupBox.get(closed) : -1;
    }
    const seen = new Set();
    s.edges = [];
    for (let v = 0; v < info.n; v++) {
      for (const u of g.in[v]) {
        const a = rep[u], b = rep[v];
        if (a < 0 || b < 0 || a === b) continue;
        const key = a * 1e6 + b;
        if (seen.has(key)) continue;
        seen.add(key);
        s.edges.push([a, b, u, v]);
      }
    }
    const visible = s.boxes.filter((b) => b.kind === "node").length;
    root.setAttribute("data-visible-nodes", String(visible));
    root.setAttribute("data-visible-groups", String(s.boxes.length - visible));
    status.textContent = `${info.n} nodes, ${g.groups.length - 1} groups; showing ${visible} nodes and ${s.boxes.length - visible} groups. Click a node for its details, a group to open or close it.`;
  }

  // Before the first fit, once the canvas has its size: the first picture (placed for a canvas
  // of about 1200 x 760 CSS px) opens less, deepest groups first, until it fits at scale 1 (labels
  // at 11 px or more), in a smaller output. A picture that would then show only a few boxes
  // (the layers of a deep model) keeps them, drawn at scale 1 from its top, and scrolls, as
  // s.tall (from Python: g.tall) says. Small graphs open whole and scroll.
  s.tall = !!g.tall;
  s.beforeFirst = (scaleFor) => {
    if (info.n <= 150) return; // OPEN_WHOLE_UP_TO in views/explorer_data.py (and FEW_BOXES: 8)
    while (scaleFor(s.boxes, s.tall ? 1e9 : 0) < 1) {
      const open = [...s.expanded].filter((gid) => gid > 0);
      if (!open.length) break;
      const deepest = Math.max(...open.map((gid) => info.depth[gid]));
      const kept = placeBoxes(g, new Set([...s.expanded].filter((gid) => info.depth[gid] !== deepest || gid === 0)));
      if (!s.tall && kept.filter((b) => b.kind === "node" || !b.open).length < 8 && scaleFor(s.boxes, 1e9) >= 1) {
        s.tall = true;
        break;
      }
      for (const gid of open) if (info.depth[gid] === deepest) s.expanded.delete(gid);
      rebuild();
    }
  };
  const painter = createPainter(s, root, canvas);
  const act = bindInteraction(s, ui, painter, rebuild, opts);
  const sizes = window.ResizeObserver ? new ResizeObserver(() => painter.resized()) : null;
  if (sizes) sizes.observe(canvas);

  // Test hooks on the root element (tests/browser/test_readability.py), no globals:
  // edgePoint(i) is where on the page edge i's middle is drawn (hover it to see its tensor);
  // placeBoxes(g, open) and placedBoxes(g) compare placement.js with Python's first picture.
  root.edgePoint = (i) => {
    const [a, b] = s.edges[i], r = canvas.getBoundingClientRect();
    const [x, y] = edgeMiddle(s.boxes[a], s.boxes[b]);
    return [r.left + s.view.tx + x * s.view.k, r.top + s.view.ty + y * s.view.k];
  };
  root.placeBoxes = placeBoxes;
  root.placedBoxes = placedBoxes;
  // labelBoxes(): every box in view at the last draw, [kind, name, x, y, w, h, labelled] in CSS
  // px of the canvas (test_explorer_zoom.py: a box that can hold a label has one).
  root.labelBoxes = () => s.labelBoxes || [];

  rebuild();
  painter.fit(null, true);
  requestAnimationFrame(() => { painter.draw(); root.setAttribute("data-ready", "1"); });
  return {
    root,
    highlightNames(names, focus = true) {
      act.setHighlight(names.map((name) => info.byName.get(name)).filter((v) => v !== undefined), focus);
    },
    select(name) { const v = info.byName.get(name); if (v !== undefined) act.select(v); },
    expandAll() { ui.buttons.expand.onclick(); },
    redraw: painter.redraw,
    // Removes what it added outside its elements: the window's drag listeners, the observer.
    dispose() { act.dispose(); if (sizes) sizes.disconnect(); },
  };
}
