// The graph explorer: draws one graph payload (views/explorer_data.py) on a canvas.
// Layout and the first picture's placement were computed in Python; expanding a group only
// places laid-out groups next to each other (placement.js), never runs a layout.
// Every string from the capture reaches the page through textContent or canvas fillText.

const OP_FILL = ["#dbeafe", "#ffffff", "#ffffff", "#ede9fe", "#fef9c3", "#e5e7eb"];
const CS_FONT_PX = 11; // label font at scale 1; drawn size = CS_FONT_PX * scale (data-label-px)
const CS_READABLE_UP_TO = 150; // drawings of at most this many nodes open at scale >= 1

function csEl(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function csPrepare(g) {
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

function csCreateExplorer(container, g, opts) {
  opts = opts || {};
  const info = csPrepare(g);
  const S = (i) => (i >= 0 ? g.strings[i] : "");
  const root = csEl("div", { class: "cs-explorer", "data-cs-explorer": g.kind });
  const bar = csEl("div", { class: "cs-bar" });
  const search = csEl("input", { type: "search", placeholder: "search name, op, target", class: "cs-search" });
  const found = csEl("span", { class: "cs-found" });
  const buttons = {};
  for (const [key, label] of [["fit", "fit"], ["expand", "expand all"], ["collapse", "collapse all"],
    ["up", "ancestors"], ["down", "descendants"], ["clear", "clear"]]) {
    buttons[key] = csEl("button", { class: "cs-btn", "data-action": key }, label);
    bar.appendChild(buttons[key]);
  }
  bar.prepend(search, found);
  const body = csEl("div", { class: "cs-ex-body" });
  const canvas = csEl("canvas", { class: "cs-canvas" });
  const details = csEl("div", { class: "cs-details" });
  details.appendChild(csEl("p", { class: "cs-muted" }, "Click a node for its details; click a group to open or close it."));
  body.append(canvas, details);
  const status = csEl("div", { class: "cs-ex-status" });
  root.append(bar, body, status);
  container.appendChild(root);

  const Z = g.sizes;
  const expanded = new Set();
  g.groups.forEach((grp, gid) => { if (grp.open) expanded.add(gid); });
  let highlight = new Set();
  let selected = -1;
  let boxes = [], nodeBox = new Int32Array(info.n), rep = new Int32Array(info.n), edges = [];
  let view = { k: 1, tx: 20, ty: 20 };
  let firstPicture = true; // Python placed it (payload.placed); later ones come from placement.js
  const tip = csEl("div", { class: "cs-tip" });
  tip.style.display = "none";
  body.appendChild(tip);

  function rebuild() {
    boxes = firstPicture ? csPlacedBoxes(g) : csPlaceBoxes(g, expanded);
    firstPicture = false;
    nodeBox.fill(-1);
    const groupBox = new Map();
    boxes.forEach((b, i) => { if (b.kind === "node") nodeBox[b.id] = i; else groupBox.set(b.id, i); });
    for (let v = 0; v < info.n; v++) {
      if (nodeBox[v] >= 0) { rep[v] = nodeBox[v]; continue; }
      // The outermost closed group that holds the node stands for it.
      let gid = info.owner[v], closed = -1;
      while (gid > 0) { if (!expanded.has(gid)) closed = gid; gid = g.groups[gid].parent; }
      rep[v] = closed >= 0 && groupBox.has(closed) ? groupBox.get(closed) : -1;
    }
    const seen = new Set();
    edges = [];
    for (let v = 0; v < info.n; v++) {
      for (const u of g.in[v]) {
        const a = rep[u], b = rep[v];
        if (a < 0 || b < 0 || a === b) continue;
        const key = a * 1e6 + b;
        if (seen.has(key)) continue;
        seen.add(key);
        edges.push([a, b, u, v]);
      }
    }
    // For tests: where on the page edge i's middle is drawn (hover it to see its tensor).
    root.csEdgePoint = (i) => {
      const [a, b] = edges[i], A = boxes[a], B = boxes[b], r = canvas.getBoundingClientRect();
      const x = (A.x + A.w / 2 + B.x + B.w / 2) / 2, y = (A.y + A.h + B.y) / 2;
      return [r.left + view.tx + x * view.k, r.top + view.ty + y * view.k];
    };
    const visible = boxes.filter((b) => b.kind === "node").length;
    root.setAttribute("data-visible-nodes", String(visible));
    root.setAttribute("data-visible-groups", String(boxes.length - visible));
    status.textContent = `${info.n} nodes, ${g.groups.length - 1} groups; showing ${visible} nodes and ${boxes.length - visible} groups`;
  }

  // --- drawing ---------------------------------------------------------------------------------
  const ctx = canvas.getContext("2d");
  let frame = 0;
  function size() {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, canvas.clientWidth || 600), h = Math.max(200, canvas.clientHeight || 480);
    canvas.width = w * ratio; canvas.height = h * ratio;
    return { w, h, ratio };
  }
  let needFit = true; // fit once the canvas has a size (it has none inside a hidden tab)
  function draw() {
    frame = 0;
    if (!canvas.clientWidth) return;
    if (needFit) { needFit = false; fitTo(pendingFit); }
    const { w, h, ratio } = size();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.setTransform(ratio * view.k, 0, 0, ratio * view.k, ratio * view.tx, ratio * view.ty);
    const x0 = -view.tx / view.k, y0 = -view.ty / view.k, x1 = x0 + w / view.k, y1 = y0 + h / view.k;
    const inView = (b) => b.x + b.w >= x0 && b.x <= x1 && b.y + b.h >= y0 && b.y <= y1;
    const litGroups = new Set();
    if (highlight.size) for (const v of highlight) if (rep[v] >= 0) litGroups.add(rep[v]);
    const text = CS_FONT_PX * view.k >= 6; // smaller is noise, not text
    root.setAttribute("data-label-px", text ? (CS_FONT_PX * view.k).toFixed(2) : "0");
    ctx.lineWidth = 1 / view.k;
    ctx.font = `${CS_FONT_PX}px ui-monospace, monospace`;
    boxes.forEach((b) => {
      if (b.kind !== "group" || !b.open || !inView(b)) return;
      ctx.fillStyle = info.depth[b.id] % 2 ? "rgba(120,120,160,0.06)" : "rgba(120,160,120,0.06)";
      ctx.strokeStyle = "#b4b4c8";
      ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
      if (text) { ctx.fillStyle = "#555"; ctx.fillText(`${g.groups[b.id].label}  \u25be`, b.x + 6, b.y + 14); }
    });
    ctx.strokeStyle = "#9aa0a6";
    ctx.beginPath();
    for (const [a, b] of edges) {
      const A = boxes[a], B = boxes[b];
      if (Math.max(A.y + A.h, B.y) < y0 || Math.min(A.y + A.h, B.y) > y1) continue;
      edgePath(A, B);
    }
    ctx.stroke();
    // The cut of a partition: edges that leave a saved tensor cross from forward to backward.
    ctx.strokeStyle = "#7c3aed"; ctx.setLineDash([6 / view.k, 4 / view.k]); ctx.beginPath();
    for (const [a, b, u, v] of edges) {
      if (S(g.note[u]) !== "saved for backward" || !String(g.names[v]).startsWith("bw.")) continue;
      edgePath(boxes[a], boxes[b]);
    }
    ctx.stroke(); ctx.setLineDash([]);
    if (highlight.size) {
      ctx.strokeStyle = "#e8710a"; ctx.lineWidth = 2 / view.k; ctx.beginPath();
      for (const [a, b, u, v] of edges) {
        if (!(highlight.has(u) && highlight.has(v))) continue;
        edgePath(boxes[a], boxes[b]);
      }
      ctx.stroke(); ctx.lineWidth = 1 / view.k;
    }
    boxes.forEach((b, index) => {
      if (b.kind === "group" && b.open) return;
      if (!inView(b)) return;
      const on = !highlight.size || (b.kind === "node" ? highlight.has(b.id) : litGroups.has(index));
      ctx.globalAlpha = on ? 1 : 0.3;
      if (b.kind === "group") {
        ctx.fillStyle = "#eef2ff"; ctx.strokeStyle = on && highlight.size ? "#e8710a" : "#6366f1";
        ctx.fillRect(b.x + 3, b.y + 3, b.w, b.h); ctx.strokeRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
        if (text) {
          ctx.fillStyle = "#312e81";
          ctx.fillText(clip(`\u25b8 ${g.groups[b.id].label}`, 25), b.x + 6, b.y + 14);
          const grp = g.groups[b.id];
          ctx.fillStyle = "#555"; ctx.fillText(`${grp.size} nodes, ${grp.ops} ops`, b.x + 6, b.y + 28);
        }
      } else {
        const v = b.id;
        ctx.fillStyle = highlight.has(v) ? "#fde68a" : S(g.note[v]) === "recomputed in backward" ? "#fed7aa" : OP_FILL[g.op[v]] || "#fff";
        ctx.strokeStyle = v === selected ? "#dc2626" : S(g.note[v]) === "saved for backward" ? "#7c3aed" : "#6b7280";
        ctx.lineWidth = (v === selected ? 3 : 1) / view.k;
        ctx.fillRect(b.x, b.y, b.w, b.h); ctx.strokeRect(b.x, b.y, b.w, b.h);
        ctx.lineWidth = 1 / view.k;
        if (text) {
          ctx.fillStyle = "#111";
          // A parameter's path is told apart by its end (`c_attn.bias`): clip its start.
          const label = S(g.label[v]);
          ctx.fillText(label ? clipStart(label, 25) : clip(g.names[v], 25), b.x + 5, b.y + 13);
          ctx.fillStyle = "#4b5563";
          const t = g.op[v] === 1 ? S(g.target[v]) : g.ops[g.op[v]];
          ctx.fillText(clip(`${t} ${S(g.type[v])}`, 25), b.x + 5, b.y + 27);
        }
      }
    });
    ctx.globalAlpha = 1;
    root.setAttribute("data-drawn", String(Number(root.getAttribute("data-drawn") || 0) + 1));
  }
  function edgePath(A, B) {
    // From the bottom of the source to the top of the target (static_graph.py draws the same).
    const sx = A.x + A.w / 2, sy = A.y + A.h, tx = B.x + B.w / 2, ty = B.y;
    const bend = Math.max(20, Math.abs(ty - sy) / 2);
    ctx.moveTo(sx, sy);
    ctx.bezierCurveTo(sx, sy + bend, tx, ty - bend, tx, ty);
  }
  function clipStart(s, n) { return s.length > n ? "\u2026" + s.slice(s.length - n + 1) : s; }
  function clip(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }
  function redraw() { if (!frame) frame = requestAnimationFrame(draw); }

  let pendingFit = null;
  function fit(only) {
    pendingFit = only || null;
    if (!canvas.clientWidth) { needFit = true; return; }
    fitTo(only);
    redraw();
  }
  function fitTo(only) {
    const chosen = only && only.length ? only : boxes;
    if (!chosen.length) return;
    const [x0, y0, x1, y1] = csBounds(chosen);
    const w = canvas.clientWidth || 600;
    // Fit the width; a drawing of few boxes is never shrunk below scale 1, so every label is
    // readable at first paint (pan or zoom out to see the rest); the canvas grows to its height.
    let k = Math.min(1.25, w / (x1 - x0 + 40));
    if (chosen.filter((b) => b.kind === "node").length <= CS_READABLE_UP_TO) k = Math.max(k, 1);
    if (only && only.length) k = Math.min(k, (canvas.clientHeight || 480) / (y1 - y0 + 40));
    view.k = Math.min(2, Math.max(0.02, k));
    if (!only) canvas.style.height = `${Math.round(Math.min(760, Math.max(320, (y1 - y0) * view.k + 40)))}px`;
    const spare = w - (x1 - x0) * view.k;
    if (spare > 0) view.tx = spare / 2 - x0 * view.k;
    else { // wider than the canvas: start where the graph starts (its top), centred on it
      const closed = chosen.filter((b) => b.kind === "node" || !b.open);
      const top = closed.reduce((a, b) => (b.y < a.y || (b.y === a.y && b.x < a.x) ? b : a));
      const want = w / 2 - (top.x + top.w / 2) * view.k;
      view.tx = Math.min(20 - x0 * view.k, Math.max(w - 20 - x1 * view.k, want));
    }
    view.ty = 20 - y0 * view.k;
  }

  // --- interaction -----------------------------------------------------------------------------
  function openAncestors(v) {
    let gid = info.owner[v];
    while (gid > 0) { expanded.add(gid); gid = g.groups[gid].parent; }
  }
  function showDetails(v) {
    details.textContent = "";
    const rows = [["name", g.names[v]], ["op", g.ops[g.op[v]]], ["target", S(g.full_target[v])],
      ["type", S(g.type[v])], ["module", S(g.mod[v])], ["note", S(g.note[v])]];
    const src = g.src[v];
    if (src) rows.push(["source", `${S(src[0])}:${src[1]}`], ["code", S(src[2])]);
    const table = csEl("table", { class: "cs-kv" });
    for (const [k, value] of rows) {
      if (!value) continue;
      const tr = csEl("tr"); tr.append(csEl("th", {}, k), csEl("td", {}, value)); table.appendChild(tr);
    }
    details.appendChild(table);
    if (src && opts.onLine) {
      const a = csEl("button", { class: "cs-link", "data-link": "line" }, `show line ${src[1]} in the cell`);
      a.onclick = () => opts.onLine(S(src[0]), src[1]);
      details.appendChild(a);
    }
    const ks = g.kernels[v] || [];
    if (ks.length) {
      details.appendChild(csEl("div", { class: "cs-muted" }, "computed by kernel"));
      for (const k of ks) {
        const a = csEl("button", { class: "cs-link", "data-link": "kernel" }, S(k));
        a.onclick = () => opts.onKernel && opts.onKernel(S(k));
        details.appendChild(a);
      }
    }
    const ins = g.in[v].map((u) => g.names[u]), outs = info.users[v].map((u) => g.names[u]);
    if (ins.length) details.appendChild(csEl("div", { class: "cs-muted" }, `inputs: ${ins.join(", ")}`));
    if (outs.length) details.appendChild(csEl("div", { class: "cs-muted" }, `users: ${outs.join(", ")}`));
  }
  function select(v) {
    selected = v;
    if (v >= 0) { openAncestors(v); rebuild(); showDetails(v); }
    root.setAttribute("data-selected", v >= 0 ? g.names[v] : "");
    redraw();
  }
  function setHighlight(indices, focus) {
    highlight = new Set(indices);
    for (const v of highlight) openAncestors(v);
    rebuild();
    root.setAttribute("data-highlighted", String(highlight.size));
    if (focus && highlight.size) fit([...highlight].map((v) => boxes[rep[v]]).filter(Boolean));
    redraw();
  }
  function walk(start, next) {
    const out = new Set([start]), stack = [start];
    while (stack.length) for (const u of next(stack.pop())) if (!out.has(u)) { out.add(u); stack.push(u); }
    return out;
  }
  function hit(ev) {
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.tx) / view.k, y = (ev.clientY - r.top - view.ty) / view.k;
    let best = -1;
    boxes.forEach((b, i) => {
      if (x < b.x || x > b.x + b.w || y < b.y || y > b.y + b.h) return;
      if (b.kind === "group" && b.open && y > b.y + Z.label) return;
      best = i;
    });
    return best;
  }
  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
  window.addEventListener("mousemove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) { view.tx += dx; view.ty += dy; drag.x = ev.clientX; drag.y = ev.clientY; redraw(); }
  });
  window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
  canvas.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const i = hit(ev);
    if (i < 0) return;
    const b = boxes[i];
    if (b.kind === "group") {
      if (expanded.has(b.id)) expanded.delete(b.id); else expanded.add(b.id);
      rebuild(); redraw();
    } else select(b.id);
  });
  canvas.addEventListener("wheel", (ev) => {
    const r = canvas.getBoundingClientRect();
    if (ev.ctrlKey || ev.metaKey) { // zoom (a pinch sends ctrlKey too)
      ev.preventDefault();
      const mx = ev.clientX - r.left, my = ev.clientY - r.top;
      const k = Math.min(4, Math.max(0.01, view.k * Math.exp(-ev.deltaY * 0.0015)));
      view.tx = mx - (mx - view.tx) * (k / view.k); view.ty = my - (my - view.ty) * (k / view.k); view.k = k;
      redraw();
      return;
    }
    // A plain wheel scrolls the drawing while there is more of it that way, then the page.
    const [x0, y0, x1, y1] = csBounds(boxes);
    const ty = Math.min(20 - y0 * view.k, Math.max(r.height - 20 - y1 * view.k, view.ty - ev.deltaY));
    const tx = Math.min(20 - x0 * view.k, Math.max(r.width - 20 - x1 * view.k, view.tx - ev.deltaX));
    const moved = Math.abs(ty - view.ty) > 0.5 || Math.abs(tx - view.tx) > 0.5;
    if (!moved) return;
    ev.preventDefault();
    if (Math.abs(ty - view.ty) > 0.5) view.ty = ty;
    if (Math.abs(tx - view.tx) > 0.5) view.tx = tx;
    redraw();
  }, { passive: false });
  // Hover: a node's full name, op and type; an edge's tensor (shape and dtype) and its ends.
  let hoverFrame = 0, hoverEvent = null;
  canvas.addEventListener("mousemove", (ev) => {
    hoverEvent = ev;
    if (!hoverFrame) hoverFrame = requestAnimationFrame(() => { hoverFrame = 0; hover(hoverEvent); });
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  function hover(ev) {
    if (drag) { tip.style.display = "none"; return; }
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.tx) / view.k, y = (ev.clientY - r.top - view.ty) / view.k;
    let text = "";
    const i = hit(ev);
    if (i >= 0 && boxes[i].kind === "node") {
      const v = boxes[i].id;
      text = `${g.names[v]}\n${g.ops[g.op[v]]} ${S(g.full_target[v])}\n${S(g.type[v])}`;
    } else if (i < 0 || boxes[i].open) {
      let best = 6 / view.k, found = null;
      for (const e of edges) {
        const d = csEdgeDistance(boxes[e[0]], boxes[e[1]], x, y);
        if (d < best) { best = d; found = e; }
      }
      if (found) {
        const [, , u, v] = found;
        text = `${S(g.type[u]) || "(no tensor type logged)"}\n${g.names[u]} \u2192 ${g.names[v]}`;
        root.setAttribute("data-hover-edge", `${g.names[u]}>${g.names[v]}`);
      }
    }
    tip.textContent = text;
    tip.style.display = text ? "" : "none";
    tip.style.left = `${ev.clientX - r.left + 14}px`;
    tip.style.top = `${ev.clientY - r.top + 14}px`;
  }
  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    const q = search.value.trim().toLowerCase();
    if (!q) { setHighlight([], false); found.textContent = ""; return; }
    const hits = [];
    for (let v = 0; v < info.n; v++) {
      if (g.names[v].toLowerCase().includes(q) || S(g.full_target[v]).toLowerCase().includes(q) ||
          g.ops[g.op[v]] === q) hits.push(v);
    }
    found.textContent = `${hits.length} found`;
    root.setAttribute("data-found", String(hits.length));
    setHighlight(hits, true);
    if (hits.length) select(hits[0]);
  });
  buttons.fit.onclick = () => fit();
  buttons.expand.onclick = () => { g.groups.forEach((_, gid) => expanded.add(gid)); rebuild(); fit(); };
  buttons.collapse.onclick = () => { expanded.clear(); expanded.add(0); rebuild(); fit(); };
  buttons.up.onclick = () => { if (selected >= 0) setHighlight(walk(selected, (v) => g.in[v]), false); };
  buttons.down.onclick = () => { if (selected >= 0) setHighlight(walk(selected, (v) => info.users[v]), false); };
  buttons.clear.onclick = () => { setHighlight([], false); select(-1); found.textContent = ""; };
  if (window.ResizeObserver) new ResizeObserver(() => redraw()).observe(canvas);

  rebuild();
  fit();
  requestAnimationFrame(() => { draw(); root.setAttribute("data-ready", "1"); });
  return {
    root,
    highlightNames(names, focus = true) {
      setHighlight(names.map((name) => info.byName.get(name)).filter((v) => v !== undefined), focus);
    },
    select(name) { const v = info.byName.get(name); if (v !== undefined) select(v); },
    expandAll() { buttons.expand.onclick(); },
    redraw,
  };
}
