// ext/compilescope/static/dom.js
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  if (text !== void 0 && text !== null) e.textContent = String(text);
  return e;
}

// ext/compilescope/static/placement.js
function placeBoxes(g, expanded) {
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
    grp.items.forEach((_, j) => {
      const l = grp.y[j];
      layerH[l] = Math.max(layerH[l] || 0, sizes[j].h);
    });
    const layerY = [];
    let y = gid === 0 ? 0 : Z.label + Z.pad;
    for (let l = 0; l < layerH.length; l++) {
      layerY[l] = y;
      y += (layerH[l] || 0) + Z.vgap;
    }
    const order = grp.items.map((_, j) => j).sort((a, b) => grp.y[a] - grp.y[b] || grp.x[a] - grp.x[b]);
    const right = [];
    const pos = new Array(grp.items.length);
    let width = 0;
    for (const j of order) {
      const l = grp.y[j];
      const base = (gid === 0 ? 0 : Z.pad) + grp.x[j] * COL;
      const x = right[l] === void 0 ? base : Math.max(base, right[l] + Z.hgap);
      right[l] = x + sizes[j].w;
      pos[j] = { x, y: layerY[l], ...sizes[j] };
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
      else {
        out.push({ kind: "group", id: -1 - item, x, y, w: p.w, h: p.h, open: true });
        absolute(p, x, y);
      }
    });
  }
  absolute(place(0), 0, 0);
  return out;
}
function placedBoxes(g) {
  return g.placed.map(([item, x, y, w, h]) => item >= 0 ? { kind: "node", id: item, x, y, w, h } : { kind: "group", id: -1 - item, x, y, w, h, open: g.groups[-1 - item].open });
}
function edgeCurve(A, B) {
  if (B.y >= A.y + A.h) {
    const sx2 = A.x + A.w / 2, sy2 = A.y + A.h, tx2 = B.x + B.w / 2, ty2 = B.y;
    const bend = Math.max(20, Math.abs(ty2 - sy2) / 2);
    return [sx2, sy2, sx2, sy2 + bend, tx2, ty2 - bend, tx2, ty2];
  }
  const right = B.x + B.w / 2 >= A.x + A.w / 2;
  const sx = right ? A.x + A.w : A.x, sy = A.y + A.h / 2;
  const beside = right ? B.x >= A.x + A.w : B.x + B.w <= A.x;
  const tx = right === beside ? B.x : B.x + B.w, ty = B.y + B.h / 2;
  const out = (right ? 1 : -1) * Math.max(30, Math.abs(tx - sx) / 2);
  return [sx, sy, sx + out, sy, beside ? tx - out : tx + out, ty, tx, ty];
}
function edgeDistance(A, B, x, y) {
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
function edgeMiddle(A, B) {
  const [sx, sy, ax, ay, bx, by, tx, ty] = edgeCurve(A, B);
  return [(sx + 3 * ax + 3 * bx + tx) / 8, (sy + 3 * ay + 3 * by + ty) / 8];
}
function groupText(g, gid) {
  const grp = g.groups[gid];
  if (!/^\d+$/.test(grp.label) || !grp.path) return grp.label;
  return grp.path.split(".").slice(-2).join(".");
}
function bounds(boxes) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.w);
    y1 = Math.max(y1, b.y + b.h);
  }
  return [x0, y0, x1, y1];
}

// ext/compilescope/static/explorer_draw.js
var OP_FILL = ["#dbeafe", "#ffffff", "#ffffff", "#ede9fe", "#fef9c3", "#e5e7eb"];
var FONT_PX = 11;
var READABLE_UP_TO = 150;
var MARGIN = 20;
var FIT_LABEL_PX = 10;
var LEAST_LABEL_PX = 9;
function canvasMaxHeight(canvas) {
  const h = window.innerHeight || 950, top = canvas.getBoundingClientRect().top;
  const room = top > 0 && top < h / 2 ? h - top - 8 : h - 90;
  return Math.round(Math.min(1e3, Math.max(320, room)));
}
function clipStart(s, n) {
  return s.length > n ? "\u2026" + s.slice(s.length - n + 1) : s;
}
function clip(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
}
function createPainter(s, root, canvas) {
  const { g, info, S, view } = s;
  const ctx = canvas.getContext("2d");
  let frame = 0;
  function size() {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, canvas.clientWidth || 600), h = Math.max(200, canvas.clientHeight || 480);
    canvas.width = w * ratio;
    canvas.height = h * ratio;
    return { w, h, ratio };
  }
  let needFit = true;
  function draw() {
    frame = 0;
    if (!canvas.clientWidth) return;
    if (needFit) {
      needFit = false;
      fitTo(pendingFit);
    }
    const { boxes, edges, highlight, rep, selected } = s;
    const { w, h, ratio } = size();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.setTransform(ratio * view.k, 0, 0, ratio * view.k, ratio * view.tx, ratio * view.ty);
    const x0 = -view.tx / view.k, y0 = -view.ty / view.k, x1 = x0 + w / view.k, y1 = y0 + h / view.k;
    const inView = (b) => b.x + b.w >= x0 && b.x <= x1 && b.y + b.h >= y0 && b.y <= y1;
    const whole = (x, y, bw, bh) => x >= x0 && x + bw <= x1 && y >= y0 && y + bh <= y1;
    const seen = [];
    for (const b of boxes) {
      if (b.kind === "node") {
        if (whole(b.x, b.y, b.w, b.h)) seen.push(g.names[b.id]);
        continue;
      }
      const grp = g.groups[b.id];
      if (b.open ? whole(b.x, b.y, Math.min(b.w, 120), g.sizes.label) : whole(b.x, b.y, b.w, b.h)) seen.push(grp.path || grp.label);
    }
    const listed = seen.join("\n");
    if (listed !== root.getAttribute("data-in-view")) root.setAttribute("data-in-view", listed);
    const litGroups = /* @__PURE__ */ new Set();
    if (highlight.size) {
      for (const v of highlight) if (rep[v] >= 0) litGroups.add(rep[v]);
    }
    const labels = [];
    ctx.lineWidth = 1 / view.k;
    ctx.font = `${FONT_PX}px ui-monospace, monospace`;
    boxes.forEach((b) => {
      if (b.kind !== "group" || !b.open || !inView(b)) return;
      ctx.fillStyle = info.depth[b.id] % 2 ? "rgba(120,120,160,0.06)" : "rgba(120,160,120,0.06)";
      ctx.strokeStyle = "#b4b4c8";
      ctx.fillRect(b.x, b.y, b.w, b.h);
      ctx.strokeRect(b.x, b.y, b.w, b.h);
      labels.push([b, [`${groupText(g, b.id)}  \u25BE`], ["#555"], true, true]);
    });
    ctx.strokeStyle = "#9aa0a6";
    ctx.beginPath();
    for (const [a, b] of edges) {
      const A = boxes[a], B = boxes[b];
      if (Math.max(A.y + A.h, B.y) < y0 || Math.min(A.y + A.h, B.y) > y1) continue;
      edgePath(A, B);
    }
    ctx.stroke();
    ctx.strokeStyle = "#7c3aed";
    ctx.setLineDash([6 / view.k, 4 / view.k]);
    ctx.beginPath();
    for (const [a, b, u, v] of edges) {
      if (S(g.note[u]) !== "saved for backward" || !String(g.names[v]).startsWith("bw.")) continue;
      edgePath(boxes[a], boxes[b]);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    if (highlight.size) {
      ctx.strokeStyle = "#e8710a";
      ctx.lineWidth = 2 / view.k;
      ctx.beginPath();
      for (const [a, b, u, v] of edges) {
        if (!(highlight.has(u) && highlight.has(v))) continue;
        edgePath(boxes[a], boxes[b]);
      }
      ctx.stroke();
      ctx.lineWidth = 1 / view.k;
    }
    boxes.forEach((b, index) => {
      if (b.kind === "group" && b.open) return;
      if (!inView(b)) return;
      const on = !highlight.size || (b.kind === "node" ? highlight.has(b.id) : litGroups.has(index));
      ctx.globalAlpha = on ? 1 : 0.3;
      if (b.kind === "group") {
        ctx.fillStyle = "#eef2ff";
        ctx.strokeStyle = on && highlight.size ? "#e8710a" : "#6366f1";
        ctx.fillRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.strokeRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.fillRect(b.x, b.y, b.w, b.h);
        ctx.strokeRect(b.x, b.y, b.w, b.h);
        const grp = g.groups[b.id];
        labels.push([b, [`\u25B8 ${groupText(g, b.id)}`, `${grp.size} nodes, ${grp.ops} ops`], ["#312e81", "#555"], on, false]);
      } else {
        const v = b.id;
        ctx.fillStyle = highlight.has(v) ? "#fde68a" : S(g.note[v]) === "recomputed in backward" ? "#fed7aa" : OP_FILL[g.op[v]] || "#fff";
        ctx.strokeStyle = v === selected ? "#dc2626" : S(g.note[v]) === "saved for backward" ? "#7c3aed" : "#6b7280";
        ctx.lineWidth = (v === selected ? 3 : 1) / view.k;
        ctx.fillRect(b.x, b.y, b.w, b.h);
        ctx.strokeRect(b.x, b.y, b.w, b.h);
        ctx.lineWidth = 1 / view.k;
        const label = S(g.label[v]);
        const t = g.op[v] === 1 ? S(g.target[v]) : g.ops[g.op[v]];
        labels.push([b, [label ? [label] : g.names[v], `${t} ${S(g.type[v])}`], ["#111", "#4b5563"], on, false]);
      }
    });
    ctx.globalAlpha = 1;
    drawLabels(labels, w, h, ratio);
    drawScrollMarks(w, h, ratio);
    root.setAttribute("data-drawn", String(Number(root.getAttribute("data-drawn") || 0) + 1));
  }
  function drawLabels(labels, w, h, ratio) {
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const scaled = FONT_PX * view.k, px = Math.max(LEAST_LABEL_PX, scaled);
    const lineH = px * 13 / FONT_PX;
    ctx.font = `${px}px ui-monospace, monospace`;
    const charW = ctx.measureText("0").width || px * 0.6;
    const shown = [];
    let drawn = 0;
    for (const [b, lines, colours, on, open] of labels) {
      const sx = view.tx + b.x * view.k, sy = view.ty + b.y * view.k;
      const sw = b.w * view.k, sh = b.h * view.k;
      if (sx > w || sy > h || sx + sw < 0 || sy + sh < 0) continue;
      const pad = (open ? 6 : 5) * Math.min(1, view.k);
      const room = scaled >= LEAST_LABEL_PX ? 25 : Math.floor((sw - 2 * pad) / charW);
      const rows = open ? sh >= lineH + 3 ? 1 : 0 : Math.floor((sh - 3) / lineH);
      const fits = room >= 4 && rows >= 1;
      shown.push([
        b.kind,
        b.kind === "node" ? g.names[b.id] : g.groups[b.id].path || g.groups[b.id].label,
        Math.round(sx),
        Math.round(sy),
        Math.round(sw),
        Math.round(sh),
        fits ? 1 : 0
      ]);
      if (!fits) continue;
      drawn += 1;
      ctx.globalAlpha = on ? 1 : 0.3;
      lines.slice(0, rows).forEach((line, i) => {
        const text = Array.isArray(line) ? clipStart(line[0], room) : clip(line, room);
        if (open && scaled < LEAST_LABEL_PX) {
          ctx.fillStyle = "rgba(255,255,255,0.85)";
          ctx.fillRect(sx + pad - 2, sy + 1, Math.min(sw - 2 * pad + 4, text.length * charW + 4), lineH + 2);
        }
        ctx.fillStyle = colours[i];
        ctx.fillText(text, sx + pad, sy + lineH * (i + 1));
      });
    }
    ctx.globalAlpha = 1;
    s.labelBoxes = shown;
    root.setAttribute("data-label-px", drawn ? px.toFixed(2) : "0");
  }
  function drawScrollMarks(w, h) {
    const [x0, y0, x1, y1] = bounds(s.boxes);
    const lo = (t, a, size2) => -(t + a * view.k) / size2, full = (a, b) => (b - a) * view.k;
    const marks = [];
    ctx.fillStyle = "rgba(60,60,80,0.35)";
    const H = full(y0, y1) + 2 * MARGIN, W = full(x0, x1) + 2 * MARGIN;
    if (H > h + 1) {
      const top = Math.max(0, lo(view.ty - MARGIN, y0, H)), len = Math.min(1 - top, h / H);
      ctx.fillRect(w - 6, top * h, 4, Math.max(12, len * h));
      marks.push("y");
    }
    if (W > w + 1) {
      const left = Math.max(0, lo(view.tx - MARGIN, x0, W)), len = Math.min(1 - left, w / W);
      ctx.fillRect(left * w, h - 6, Math.max(12, len * w), 4);
      marks.push("x");
    }
    const said = marks.join(" ");
    if (said !== root.getAttribute("data-scrolls")) root.setAttribute("data-scrolls", said);
  }
  function edgePath(A, B) {
    const [sx, sy, ax, ay, bx, by, tx, ty] = edgeCurve(A, B);
    ctx.moveTo(sx, sy);
    ctx.bezierCurveTo(ax, ay, bx, by, tx, ty);
  }
  function redraw() {
    if (!frame) frame = requestAnimationFrame(draw);
  }
  let pendingFit = null;
  let fitted = null;
  function fit(only, first, whole) {
    pendingFit = { only: only || null, first: !!first, whole: !!whole };
    if (!canvas.clientWidth) {
      needFit = true;
      return;
    }
    fitTo(pendingFit);
    redraw();
  }
  function scaleFor(chosen, height) {
    const [x0, y0, x1, y1] = bounds(chosen);
    const w = canvas.clientWidth || 600, h = height || canvasMaxHeight(canvas);
    return Math.min(1.25, (w - 2 * MARGIN) / Math.max(1, x1 - x0), (h - 2 * MARGIN) / Math.max(1, y1 - y0));
  }
  function fitTo(want) {
    want = want || { only: null, first: false };
    const only = want.only && want.only.length ? want.only : null;
    if (want.first && s.beforeFirst) s.beforeFirst(scaleFor);
    const chosen = only || s.boxes;
    if (!chosen.length) return;
    const [x0, y0, x1, y1] = bounds(chosen);
    const w = canvas.clientWidth || 600;
    let k = scaleFor(chosen, only ? canvas.clientHeight || 480 : 0);
    if (want.first && !only && (info.n <= READABLE_UP_TO || s.tall)) k = Math.max(k, 1);
    if (!want.whole) k = Math.max(k, FIT_LABEL_PX / FONT_PX);
    view.k = Math.min(2, Math.max(0.02, k));
    if (!only) canvas.style.height = `${Math.round(Math.min(canvasMaxHeight(canvas), Math.max(320, (y1 - y0) * view.k + 2 * MARGIN)))}px`;
    const spare = w - (x1 - x0) * view.k;
    if (spare > 0) view.tx = spare / 2 - x0 * view.k;
    else {
      const closed = chosen.filter((b) => b.kind === "node" || !b.open);
      const top = closed.reduce((a, b) => b.y < a.y || b.y === a.y && b.x < a.x ? b : a);
      const centred = w / 2 - (top.x + top.w / 2) * view.k;
      view.tx = Math.min(MARGIN - x0 * view.k, Math.max(w - MARGIN - x1 * view.k, centred));
    }
    const spareY = (canvas.clientHeight || 480) - (y1 - y0) * view.k;
    view.ty = only && spareY > 0 ? spareY / 2 - y0 * view.k : MARGIN - y0 * view.k;
    fitted = { want, k: view.k, tx: view.tx, ty: view.ty, width: w };
  }
  function resized() {
    const f = fitted;
    if (f && canvas.clientWidth && canvas.clientWidth !== f.width && view.k === f.k && view.tx === f.tx && view.ty === f.ty) {
      pendingFit = f.want;
      needFit = true;
    }
    redraw();
  }
  return { draw, redraw, fit, resized };
}

// ext/compilescope/static/explorer_details.js
function shortFile(file) {
  const parts = String(file).split("/"), i = parts.lastIndexOf("site-packages");
  return (i >= 0 ? parts.slice(i + 1) : parts.slice(-2)).join("/");
}
function lineContext(details, s, file, line, light) {
  const { g, S } = s;
  const same = [];
  g.src.forEach((src, u) => {
    if (src && S(src[0]) === file && src[1] === line) same.push(u);
  });
  const box = el("div", { class: "cs-source-context", "data-source": `${file}:${line}` });
  box.append(el("div", { class: "cs-muted" }, "not in your cell:"), el("div", { class: "cs-source-path" }, `${file}:${line}`));
  const code = same.map((u) => S(g.src[u][2])).find(Boolean);
  if (code) box.appendChild(el("pre", { class: "cs-source-code" }, code));
  box.appendChild(el("div", {}, `${same.length} node${same.length === 1 ? "" : "s"} of this graph came from this line (lit in the drawing)`));
  details.querySelectorAll(".cs-source-context").forEach((old) => old.remove());
  details.appendChild(box);
  light(same);
}
function showDetails(details, s, v, opts, light) {
  const { g, info, S } = s;
  details.textContent = "";
  const rows = [
    ["name", g.names[v]],
    ["op", g.ops[g.op[v]]],
    ["target", S(g.full_target[v])],
    ["type", S(g.type[v])],
    ["module", S(g.mod[v])],
    ["note", S(g.note[v])]
  ];
  const src = g.src[v];
  if (src) rows.push(["source", `${S(src[0])}:${src[1]}`], ["code", S(src[2])]);
  const table = el("table", { class: "cs-kv" });
  for (const [k, value] of rows) {
    if (!value) continue;
    const tr = el("tr");
    tr.append(el("th", {}, k), el("td", {}, value));
    table.appendChild(tr);
  }
  details.appendChild(table);
  if (src && opts.onLine && opts.inCell && opts.inCell(S(src[0]))) {
    const a = el("button", { class: "cs-link", "data-link": "line" }, `show line ${src[1]} in the cell`);
    a.onclick = () => opts.onLine(S(src[0]), src[1]);
    details.appendChild(a);
  } else if (src) {
    const a = el("button", { class: "cs-link", "data-link": "source", title: S(src[0]) }, `${shortFile(S(src[0]))}:${src[1]}: its nodes here`);
    a.onclick = () => lineContext(details, s, S(src[0]), src[1], light);
    details.appendChild(a);
  }
  const ks = g.kernels[v] || [];
  if (ks.length) {
    details.appendChild(el("div", { class: "cs-muted" }, "computed by kernel"));
    for (const k of ks) {
      const a = el("button", { class: "cs-link", "data-link": "kernel" }, S(k));
      a.onclick = () => opts.onKernel && opts.onKernel(S(k));
      details.appendChild(a);
    }
  }
  const ins = g.in[v].map((u) => g.names[u]), outs = info.users[v].map((u) => g.names[u]);
  if (ins.length) details.appendChild(el("div", { class: "cs-muted" }, `inputs: ${ins.join(", ")}`));
  if (outs.length) details.appendChild(el("div", { class: "cs-muted" }, `users: ${outs.join(", ")}`));
}

// ext/compilescope/static/explorer_interact.js
function walk(start, next) {
  const out = /* @__PURE__ */ new Set([start]), stack = [start];
  while (stack.length) for (const u of next(stack.pop())) if (!out.has(u)) {
    out.add(u);
    stack.push(u);
  }
  return out;
}
function bindInteraction(s, ui, painter, rebuild, opts) {
  const { g, info, S, view } = s;
  const Z = g.sizes;
  const { root, canvas, tip, details, search, found, buttons } = ui;
  const { redraw, fit } = painter;
  function openAncestors(v) {
    let gid = info.owner[v];
    while (gid > 0) {
      s.expanded.add(gid);
      gid = g.groups[gid].parent;
    }
  }
  function select(v) {
    s.selected = v;
    if (v >= 0) {
      openAncestors(v);
      rebuild();
      showDetails(details, s, v, opts, (vs) => setHighlight(vs, true));
    }
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
  canvas.addEventListener("mousedown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, moved: false };
  });
  const onMove = (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) {
      view.tx += dx;
      view.ty += dy;
      drag.x = ev.clientX;
      drag.y = ev.clientY;
      redraw();
    }
  };
  const onUp = () => {
    setTimeout(() => {
      drag = null;
    }, 0);
  };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  canvas.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const i = hit(ev);
    if (i < 0) return;
    const b = s.boxes[i];
    if (b.kind === "group") {
      if (s.expanded.has(b.id)) s.expanded.delete(b.id);
      else s.expanded.add(b.id);
      rebuild();
      redraw();
    } else select(b.id);
  });
  canvas.addEventListener("wheel", (ev) => {
    const r = canvas.getBoundingClientRect();
    if (ev.ctrlKey || ev.metaKey) {
      ev.preventDefault();
      const mx = ev.clientX - r.left, my = ev.clientY - r.top;
      const k = Math.min(4, Math.max(0.01, view.k * Math.exp(-ev.deltaY * 15e-4)));
      view.tx = mx - (mx - view.tx) * (k / view.k);
      view.ty = my - (my - view.ty) * (k / view.k);
      view.k = k;
      redraw();
      return;
    }
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
  let hoverFrame = 0, hoverEvent = null;
  canvas.addEventListener("mousemove", (ev) => {
    hoverEvent = ev;
    if (!hoverFrame) hoverFrame = requestAnimationFrame(() => {
      hoverFrame = 0;
      hover(hoverEvent);
    });
  });
  canvas.addEventListener("mouseleave", () => {
    tip.style.display = "none";
  });
  function hover(ev) {
    if (drag) {
      tip.style.display = "none";
      return;
    }
    const { boxes } = s;
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.tx) / view.k, y = (ev.clientY - r.top - view.ty) / view.k;
    let text = "";
    const i = hit(ev);
    if (i >= 0 && boxes[i].kind === "node") {
      const v = boxes[i].id;
      text = `${g.names[v]}
${g.ops[g.op[v]]} ${S(g.full_target[v])}
${S(g.type[v])}`;
    } else if (i < 0 || boxes[i].open) {
      let best = 6 / view.k, nearest = null;
      for (const e of s.edges) {
        const d = edgeDistance(boxes[e[0]], boxes[e[1]], x, y);
        if (d < best) {
          best = d;
          nearest = e;
        }
      }
      if (nearest) {
        const [, , u, v] = nearest;
        text = `${S(g.type[u]) || "(no tensor type logged)"}
${g.names[u]} \u2192 ${g.names[v]}`;
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
    if (!q) {
      setHighlight([], false);
      found.textContent = "";
      return;
    }
    const hits = [];
    for (let v = 0; v < info.n; v++) {
      if (g.names[v].toLowerCase().includes(q) || S(g.full_target[v]).toLowerCase().includes(q) || g.ops[g.op[v]] === q) hits.push(v);
    }
    found.textContent = `${hits.length} found`;
    root.setAttribute("data-found", String(hits.length));
    setHighlight(hits, true);
    if (hits.length) select(hits[0]);
  });
  buttons.fit.onclick = () => fit();
  buttons.whole.onclick = () => fit(null, false, true);
  buttons.expand.onclick = () => {
    g.groups.forEach((_, gid) => s.expanded.add(gid));
    rebuild();
    fit();
  };
  buttons.collapse.onclick = () => {
    s.expanded.clear();
    s.expanded.add(0);
    rebuild();
    fit();
  };
  buttons.up.onclick = () => {
    if (s.selected >= 0) setHighlight(walk(s.selected, (v) => g.in[v]), false);
  };
  buttons.down.onclick = () => {
    if (s.selected >= 0) setHighlight(walk(s.selected, (v) => info.users[v]), false);
  };
  buttons.clear.onclick = () => {
    setHighlight([], false);
    select(-1);
    found.textContent = "";
  };
  const dispose = () => {
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
  };
  return { select, setHighlight, dispose };
}

// ext/compilescope/static/explorer.js
var BUTTONS = [
  ["fit", "fit"],
  ["whole", "whole graph"],
  ["expand", "expand all"],
  ["collapse", "collapse all"],
  ["up", "ancestors"],
  ["down", "descendants"],
  ["clear", "clear"]
];
function prepare(g) {
  const n = g.names.length;
  const owner = new Int32Array(n);
  g.groups.forEach((grp, gid) => {
    grp.items.forEach((item) => {
      if (item >= 0) owner[item] = gid;
    });
  });
  const users = Array.from({ length: n }, () => []);
  g.in.forEach((ins, v) => ins.forEach((u) => users[u].push(v)));
  const depth = g.groups.map(() => 0);
  g.groups.forEach((grp, gid) => {
    if (gid > 0) depth[gid] = depth[grp.parent] + 1;
  });
  const byName = new Map(g.names.map((name, i) => [name, i]));
  return { n, owner, users, depth, byName };
}
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
  const details = el("div", { class: "cs-details" });
  details.style.display = "none";
  body.append(canvas, details);
  const status = el("div", { class: "cs-ex-status" });
  root.append(bar, body, status);
  return { root, search, found, buttons, body, canvas, details, status };
}
function createExplorer(container, g, opts) {
  opts = opts || {};
  const info = prepare(g);
  const ui = buildParts(g.kind);
  const { root, canvas, status } = ui;
  container.appendChild(root);
  const s = {
    g,
    info,
    S: (i) => i >= 0 ? g.strings[i] : "",
    expanded: /* @__PURE__ */ new Set(),
    highlight: /* @__PURE__ */ new Set(),
    selected: -1,
    boxes: [],
    nodeBox: new Int32Array(info.n),
    rep: new Int32Array(info.n),
    edges: [],
    view: { k: 1, tx: 20, ty: 20 }
  };
  g.groups.forEach((grp, gid) => {
    if (grp.open) s.expanded.add(gid);
  });
  let firstPicture = true;
  ui.tip = el("div", { class: "cs-tip" });
  ui.tip.style.display = "none";
  ui.body.appendChild(ui.tip);
  function rebuild() {
    const { nodeBox, rep } = s;
    s.boxes = firstPicture ? placedBoxes(g) : placeBoxes(g, s.expanded);
    firstPicture = false;
    nodeBox.fill(-1);
    const groupBox = /* @__PURE__ */ new Map();
    s.boxes.forEach((b, i) => {
      if (b.kind === "node") nodeBox[b.id] = i;
      else groupBox.set(b.id, i);
    });
    for (let v = 0; v < info.n; v++) {
      if (nodeBox[v] >= 0) {
        rep[v] = nodeBox[v];
        continue;
      }
      let gid = info.owner[v], closed = -1;
      while (gid > 0) {
        if (!s.expanded.has(gid)) closed = gid;
        gid = g.groups[gid].parent;
      }
      rep[v] = closed >= 0 && groupBox.has(closed) ? groupBox.get(closed) : -1;
    }
    const seen = /* @__PURE__ */ new Set();
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
  s.tall = !!g.tall;
  s.beforeFirst = (scaleFor) => {
    if (info.n <= 150) return;
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
  root.edgePoint = (i) => {
    const [a, b] = s.edges[i], r = canvas.getBoundingClientRect();
    const [x, y] = edgeMiddle(s.boxes[a], s.boxes[b]);
    return [r.left + s.view.tx + x * s.view.k, r.top + s.view.ty + y * s.view.k];
  };
  root.placeBoxes = placeBoxes;
  root.placedBoxes = placedBoxes;
  root.labelBoxes = () => s.labelBoxes || [];
  rebuild();
  painter.fit(null, true);
  requestAnimationFrame(() => {
    painter.draw();
    root.setAttribute("data-ready", "1");
  });
  return {
    root,
    highlightNames(names, focus = true) {
      act.setHighlight(names.map((name) => info.byName.get(name)).filter((v) => v !== void 0), focus);
    },
    select(name) {
      const v = info.byName.get(name);
      if (v !== void 0) act.select(v);
    },
    expandAll() {
      ui.buttons.expand.onclick();
    },
    redraw: painter.redraw,
    // Removes what it added outside its elements: the window's drag listeners, the observer.
    dispose() {
      act.dispose();
      if (sizes) sizes.disconnect();
    }
  };
}

// ext/compilescope/static/entry_explorer.js
var entry_explorer_default = {
  render({ model, el: host }) {
    let explorer = null;
    const draw = () => {
      if (explorer) explorer.dispose();
      host.textContent = "";
      const box = el("div", { class: "cs-root" });
      host.appendChild(box);
      explorer = createExplorer(box, JSON.parse(model.get("data")));
    };
    draw();
    model.on("change:data", draw);
    return () => {
      model.off("change:data", draw);
      explorer.dispose();
    };
  }
};
export {
  entry_explorer_default as default
};
