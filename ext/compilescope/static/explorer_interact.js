// The explorer's interaction: click to select a node or open a group, drag to pan, wheel to
// scroll or zoom, hover for a node's or an edge's text, search and the bar's buttons.
// The state is explorer.js's; painting is explorer_draw.js's (redraw, fit).

import { showDetails } from "./explorer_details.js";
import { bounds, edgeDistance } from "./placement.js";

function walk(start, next) {
  const out = new Set([start]), stack = [start];
  while (stack.length) for (const u of next(stack.pop())) if (!out.has(u)) { out.add(u); stack.push(u); }
  return out;
}

// Wires the listeners; returns select(v) and setHighlight(indices, focus) for the explorer's API.
export function bindInteraction(s, ui, painter, rebuild, opts) {
  const { g, info, S, view } = s;
  const Z = g.sizes;
  const { root, canvas, tip, details, search, found, buttons } = ui;
  const { redraw, fit } = painter;
  function openAncestors(v) {
    let gid = info.owner[v];
    while (gid > 0) { s.expanded.add(gid); gid = g.groups[gid].parent; }
  }
  function select(v) {
    s.selected = v;
    if (v >= 0) { openAncestors(v); rebuild(); showDetails(details, s, v, opts, (vs) => setHighlight(vs, true)); }
    details.style.display = v >= 0 ? "" : "none";
    root.setAttribute("data-selected", v >= 0 ? g.names[v] : "");
    redraw();
  }
  function setHighlight(indices, focus) {
    s.highlight = new Set(indices);
    for (const v of s.highlight) openAncestors(v);
    rebuild();
    root.setAttribute("data-highlighted", String(s.highlight.size));
    if (focus && s.highlight.size) fit([...s.highlight].map((v) => s.boxes[s.rep[v]]).filter(Boolean));
    redraw();
  }
  function hit(ev) {
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.tx) / view.k, y = (ev.clientY - r.top - view.ty) / view.k;
    let best = -1;
    s.boxes.forEach((b, i) => {
      if (x < b.x || x > b.x + b.w || y < b.y || y > b.y + b.h) return;
      if (b.kind === "group" && b.open && y > b.y + Z.label) return;
      best = i;
    });
    return best;
  }
  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
  // A drag goes on outside the canvas: these two listen on the window, and `dispose` removes them.
  const onMove = (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) { view.tx += dx; view.ty += dy; drag.x = ev.clientX; drag.y = ev.clientY; redraw(); }
  };
  const onUp = () => { setTimeout(() => { drag = null; }, 0); };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  canvas.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const i = hit(ev);
    if (i < 0) return;
    const b = s.boxes[i];
    if (b.kind === "group") {
      if (s.expanded.has(b.id)) s.expanded.delete(b.id); else s.expanded.add(b.id);
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
    const [x0, y0, x1, y1] = bounds(s.boxes);
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
    const { boxes } = s;
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.tx) / view.k, y = (ev.clientY - r.top - view.ty) / view.k;
    let text = "";
    const i = hit(ev);
    if (i >= 0 && boxes[i].kind === "node") {
      const v = boxes[i].id;
      text = `${g.names[v]}\n${g.ops[g.op[v]]} ${S(g.full_target[v])}\n${S(g.type[v])}`;
    } else if (i < 0 || boxes[i].open) {
      let best = 6 / view.k, nearest = null;
      for (const e of s.edges) {
        const d = edgeDistance(boxes[e[0]], boxes[e[1]], x, y);
        if (d < best) { best = d; nearest = e; }
      }
      if (nearest) {
        const [, , u, v] = nearest;
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
  buttons.whole.onclick = () => fit(null, false, true);
  buttons.expand.onclick = () => { g.groups.forEach((_, gid) => s.expanded.add(gid)); rebuild(); fit(); };
  buttons.collapse.onclick = () => { s.expanded.clear(); s.expanded.add(0); rebuild(); fit(); };
  buttons.up.onclick = () => { if (s.selected >= 0) setHighlight(walk(s.selected, (v) => g.in[v]), false); };
  buttons.down.onclick = () => { if (s.selected >= 0) setHighlight(walk(s.selected, (v) => info.users[v]), false); };
  buttons.clear.onclick = () => { setHighlight([], false); select(-1); found.textContent = ""; };
  const dispose = () => { window.removeEventListener("mousemove", onMove); window.removeEventListener("mouseup", onUp); };
  return { select, setHighlight, dispose };
}
