// Placement of laid-out groups: which boxes are where when some groups are open.
// The first picture's boxes come from Python (payload.placed, views/static_graph.py's place());
// this mirrors that function for the pictures a user opens by expanding or closing groups.

export function placeBoxes(g, expanded) {
  const Z = g.sizes;
  const COL = Z.node_w + Z.hgap;
  function place(gid) {
    const grp = g.groups[gid];
    const sizes = grp.items.map((item) => {
      if (item >= 0) return { w: Z.node_w, h: Z.node_h };
      const child = -1 - item;
      return expanded.has(child) ? place(child) : { w: Z.node_w, h: Z.node_h, collapsed: true };
    });
    const layerH = [];
    grp.items.forEach((_, j) => { const l = grp.y[j]; layerH[l] = Math.max(layerH[l] || 0, sizes[j].h); });
    const layerY = [];
    let y = gid === 0 ? 0 : Z.label + Z.pad;
    for (let l = 0; l < layerH.length; l++) { layerY[l] = y; y += (layerH[l] || 0) + Z.vgap; }
    const order = grp.items.map((_, j) => j).sort((a, b) => grp.y[a] - grp.y[b] || grp.x[a] - grp.x[b]);
    const right = [];
    const pos = new Array(grp.items.length);
    let width = 0;
    for (const j of order) {
      const l = grp.y[j];
      const base = (gid === 0 ? 0 : Z.pad) + grp.x[j] * COL;
      const x = right[l] === undefined ? base : Math.max(base, right[l] + Z.hgap);
      right[l] = x + sizes[j].w;
      pos[j] = { x, y: layerY[l], ...sizes[j] }; // tops aligned: groups side by side start level
      width = Math.max(width, right[l]);
    }
    return { w: width + (gid === 0 ? 0 : Z.pad), h: y - Z.vgap + (gid === 0 ? 0 : Z.pad), pos, gid };
  }
  const out = [];
  function absolute(placed, ox, oy) {
    g.groups[placed.gid].items.forEach((item, j) => {
      const p = placed.pos[j];
      const x = ox + p.x, y = oy + p.y;
      if (item >= 0) out.push({ kind: "node", id: item, x, y, w: p.w, h: p.h });
      else if (p.collapsed) out.push({ kind: "group", id: -1 - item, x, y, w: p.w, h: p.h, open: false });
      else { out.push({ kind: "group", id: -1 - item, x, y, w: p.w, h: p.h, open: true }); absolute(p, x, y); }
    });
  }
  absolute(place(0), 0, 0);
  return out;
}

// The boxes Python placed for the first picture, in the same form.
export function placedBoxes(g) {
  return g.placed.map(([item, x, y, w, h]) => (item >= 0
    ? { kind: "node", id: item, x, y, w, h }
    : { kind: "group", id: -1 - item, x, y, w, h, open: g.groups[-1 - item].open }));
}

// The cubic curve of the edge from box A to box B: [start, control 1, control 2, end] as 8
// numbers. Down from A's bottom to B's top when B is below A; else (a partition's two halves
// side by side, an edge back up a group's order) from A's side to B's nearer side, so it does
// not run through the boxes it joins. views/static_graph.py's edge_curve is the same.
export function edgeCurve(A, B) {
  if (B.y >= A.y + A.h) {
    const sx = A.x + A.w / 2, sy = A.y + A.h, tx = B.x + B.w / 2, ty = B.y;
    const bend = Math.max(20, Math.abs(ty - sy) / 2);
    return [sx, sy, sx, sy + bend, tx, ty - bend, tx, ty];
  }
  const right = B.x + B.w / 2 >= A.x + A.w / 2; // B lies to the right: leave by A's right side
  const sx = right ? A.x + A.w : A.x, sy = A.y + A.h / 2;
  const beside = right ? B.x >= A.x + A.w : B.x + B.w <= A.x; // else they overlap in x: loop out
  const tx = right === beside ? B.x : B.x + B.w, ty = B.y + B.h / 2;
  const out = (right ? 1 : -1) * Math.max(30, Math.abs(tx - sx) / 2);
  return [sx, sy, sx + out, sy, beside ? tx - out : tx + out, ty, tx, ty];
}

// Distance from (x, y) to the edge drawn from box A to box B (its cubic curve, sampled).
export function edgeDistance(A, B, x, y) {
  const [sx, sy, ax, ay, bx, by, tx, ty] = edgeCurve(A, B);
  let best = Infinity;
  for (let i = 0; i <= 16; i++) {
    const t = i / 16, u = 1 - t;
    const px = u * u * u * sx + 3 * u * u * t * ax + 3 * u * t * t * bx + t * t * t * tx;
    const py = u * u * u * sy + 3 * u * u * t * ay + 3 * u * t * t * by + t * t * t * ty;
    best = Math.min(best, Math.hypot(px - x, py - y));
  }
  return best;
}

// The middle of the edge's curve (where a test hovers it to see its tensor).
export function edgeMiddle(A, B) {
  const [sx, sy, ax, ay, bx, by, tx, ty] = edgeCurve(A, B);
  return [(sx + 3 * ax + 3 * bx + tx) / 8, (sy + 3 * ay + 3 * by + ty) / 8];
}

// What a group's box says: its label, or `h.3` for a layer numbered `3` inside `h`.
export function groupText(g, gid) {
  const grp = g.groups[gid];
  if (!/^\d+$/.test(grp.label) || !grp.path) return grp.label;
  return grp.path.split(".").slice(-2).join(".");
}

// The smallest rectangle holding every box: [x0, y0, x1, y1].
export function bounds(boxes) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const b of boxes) { x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h); }
  return [x0, y0, x1, y1];
}
