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

// ext/compilescope/static/diff.js
function diffSeconds(s, scale, unit) {
  return s === null || s === void 0 ? "not measured" : `${(s * scale).toFixed(3)} ${unit}`;
}
function diffLines(lines) {
  const pre = el("pre", { class: "cs-code cs-diff-src" });
  for (const line of lines) {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "cs-diff-file" : line.startsWith("@@") ? "cs-diff-hunk" : line.startsWith("+") ? "cs-diff-added" : line.startsWith("-") ? "cs-diff-removed" : "";
    pre.appendChild(el("span", cls ? { class: cls } : {}, line + "\n"));
  }
  return pre;
}
function diffTimes(title, rows, scale, unit, warmth = []) {
  const said = (v, w) => w ? `${v} (${w})` : v;
  rows = rows.map((r, i) => [r[0], r[1], r[2], ...warmth[i] || ["", ""]]);
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
function renderDiff(pane, d) {
  pane.appendChild(el(
    "p",
    { "data-diff-same": d.same ? "1" : "0" },
    d.same ? "No differences in compile ids, graph breaks, graphs or kernels." : "Differences from the earlier capture (before -> this one):"
  ));
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
    const [la, lb] = (d.compile_labels || ["", ""]).map((l) => l ? ` (${l})` : "");
    pane.appendChild(el("p", { "data-diff-compile-total": "" }, `Compile time ${ta.toFixed(2)} s${la} -> ${tb.toFixed(2)} s${lb}.`));
  }
  const runtime = diffTimes("compiled run (median)", d.runtimes, 1e3, "ms");
  if (compile || runtime) pane.appendChild(el("h4", {}, "Times"));
  for (const t of [compile, runtime]) if (t) pane.appendChild(t);
}

// ext/compilescope/static/format.js
function formatBytes(n) {
  if (n === null || n === void 0) return "";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}
function formatCell(n, line) {
  return line === void 0 ? `cell [${n}]` : `cell [${n}] line ${line}`;
}
function formatLocation(loc, cellOf) {
  const n = cellOf ? cellOf[loc[0]] : void 0;
  if (n !== void 0 && n !== null) return formatCell(n, loc[1]);
  return `${String(loc[0]).split("/").pop()}:${loc[1]}`;
}
function cellNumbers(data) {
  const cellOf = {};
  for (const cell of data.cells) cellOf[cell.file] = cell.cell;
  return cellOf;
}
function formatMs(s) {
  return s === null || s === void 0 ? "" : `${(s * 1e3).toFixed(3)} ms`;
}
function formatSpread(t) {
  return t ? `${formatMs(t.median)} (min ${formatMs(t.min)}, max ${formatMs(t.max)}, n=${t.n})` : "not measured";
}

// ext/compilescope/static/result_cell.js
function linesByLocation(data) {
  const byLine = /* @__PURE__ */ new Map();
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
function renderCellPane(cellPane, data, links) {
  const lineEls = /* @__PURE__ */ new Map();
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
    for (const loc of locs) {
      const row = loc && lineEls.get(`${loc[0]}:${loc[1]}`);
      if (row) row.classList.add("cs-line-hl");
    }
  }
  function showLine(file, n) {
    markLines([[file, n]]);
    links.unfold();
    const row = lineEls.get(`${file}:${n}`);
    if (row) row.scrollIntoView({ block: "nearest" });
    linkBox.textContent = "";
    const e = byLine.get(`${file}:${n}`);
    linkBox.appendChild(el("div", { class: "cs-muted" }, `line ${n}`));
    if (!e) {
      linkBox.appendChild(el("div", {}, "nothing compiled came from this line"));
      return;
    }
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

// ext/compilescope/static/columns.js
function fitColumns(box, table, order) {
  box.classList.add("cs-fit");
  box.setAttribute("data-fit", "");
  const more = el("button", { class: "cs-link cs-more-cols", "data-more-cols": "" });
  more.style.display = "none";
  box.insertBefore(more, table);
  let shown = false, width = -1;
  const cells = (key) => table.querySelectorAll(`[data-col="${key}"]`);
  const fit = () => {
    for (const [key] of order) for (const c of cells(key)) c.classList.remove("cs-col-off");
    const off = [];
    if (!shown) {
      for (const [key, label] of order) {
        if (table.scrollWidth <= box.clientWidth + 1) break;
        for (const c of cells(key)) c.classList.add("cs-col-off");
        off.push(label);
      }
    }
    box.setAttribute("data-cols-off", String(off.length));
    more.style.display = off.length || shown ? "" : "none";
    more.textContent = shown ? "fewer columns (fit the pane)" : `+${off.length} column${off.length > 1 ? "s" : ""}: ${off.join(", ")}`;
  };
  more.onclick = () => {
    shown = !shown;
    fit();
  };
  const refit = () => {
    if (!box.clientWidth || box.clientWidth === width) return;
    width = box.clientWidth;
    fit();
  };
  const sizes = window.ResizeObserver ? new ResizeObserver(refit) : null;
  if (sizes) sizes.observe(box);
  requestAnimationFrame(refit);
  return { refit: () => {
    width = -1;
    refit();
  }, dispose: () => {
    if (sizes) sizes.disconnect();
  } };
}

// ext/compilescope/static/text.js
function highlight(source) {
  const pre = el("pre", { class: "cs-code" });
  const re = /(#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(\b\d+(?:\.\d+)?(?:e[-+]?\d+)?f?\b)|(\b(?:def|return|if|else|elif|for|while|in|import|from|as|with|class|None|True|False|and|or|not|lambda|yield|pass|auto|const|int|float|double|long|void|bool|extern|static|inline|template|typename|struct|using|namespace|include|pragma|omp|tl|triton|jit)\b)/g;
  let last = 0, m;
  const add = (text, cls) => {
    if (!text) return;
    if (cls) pre.appendChild(el("span", { class: cls }, text));
    else pre.appendChild(document.createTextNode(text));
  };
  while ((m = re.exec(source)) !== null) {
    add(source.slice(last, m.index));
    add(m[0], m[1] ? "cs-tk-c" : m[2] ? "cs-tk-s" : m[3] ? "cs-tk-n" : "cs-tk-k");
    last = re.lastIndex;
  }
  add(source.slice(last));
  return pre;
}
function mathCell(markup, text, tag) {
  const box = el(tag || "td", { class: "cs-math", "data-math": "" });
  if (markup) box.innerHTML = markup;
  else box.textContent = text;
  return box;
}

// ext/compilescope/static/result_code.js
function linesCell(k, common, cellOf) {
  const td = el("td", { class: "cs-klines", "data-col": "lines" });
  const all = k.lines.map((l, i) => [l, (k.lib || [])[i]]).filter(([l]) => l);
  if (!all.length) return td;
  const own = all.filter(([, lib]) => !lib).map(([l]) => l);
  const distinct = all.filter(([l, lib]) => lib && !common.has(`${l[0]}:${l[1]}`)).map(([l]) => l);
  const first = own.length ? own.slice(0, 2) : (distinct.length ? distinct : all.map(([l]) => l)).slice(-1);
  const brief = el("span", { class: "cs-klines-brief" });
  for (const l of first) brief.appendChild(el("span", { class: "cs-loc", title: l[0] }, formatLocation(l, cellOf)));
  td.appendChild(brief);
  const rest = all.length - first.length;
  if (rest > 0) {
    const open = el("button", { class: "cs-link cs-more-lines", "data-more-lines": String(rest), title: "every line the kernel was made from, outermost first" }, `+${rest}${own.length ? "" : " in libraries"}`);
    open.onclick = (ev) => {
      ev.stopPropagation();
      brief.textContent = "";
      for (const [l, lib] of all) brief.appendChild(el("span", { class: lib ? "cs-loc cs-muted" : "cs-loc", title: l[0] }, formatLocation(l, cellOf)));
      open.remove();
    };
    td.appendChild(open);
  }
  return td;
}
function sharedLines(kernels) {
  const keyed = kernels.filter((k) => k.lines.some(Boolean)).map((k) => new Set(k.lines.filter(Boolean).map((l) => `${l[0]}:${l[1]}`)));
  if (keyed.length < 2) return /* @__PURE__ */ new Set();
  return new Set([...keyed[0]].filter((key) => keyed.every((s) => s.has(key))));
}
var KERNEL_FOLD = [["calls", "calls"], ["kind", "kind"], ["nodes", "nodes"]];
function kernelTable(c, cellOf, onPick) {
  const table = el("table", { class: "cs-table" });
  const hr = el("tr");
  const timed = c.kernels.some((k) => k.time);
  const heads = [["kernel", "kernel"], ["kind", "kind"], ["calls", "calls"], ...timed ? [["time", "per call"]] : [], ["nodes", "nodes"], ["lines", "lines"]];
  for (const [key, h] of heads) hr.appendChild(el("th", { "data-col": key, title: key === "time" ? "median time per call" : "" }, h));
  table.appendChild(hr);
  const common = sharedLines(c.kernels);
  for (const k of c.kernels) {
    const tr = el("tr", { class: "cs-kernel-row", "data-kernel": k.name });
    tr.append(
      el("td", { class: "cs-kname", title: k.name, "data-col": "kernel" }, k.name),
      el("td", { title: "language, graph", "data-col": "kind" }, `${k.lang} ${k.role === "backward" ? "bw" : k.role === "forward" ? "fw" : k.role}`),
      el("td", { "data-col": "calls" }, k.calls),
      ...timed ? [el("td", { title: k.time ? formatSpread(k.time) : "", "data-col": "time" }, k.time ? formatMs(k.time.median) : "")] : [],
      el("td", { title: "post-grad nodes it computes", "data-col": "nodes" }, k.fused.length),
      linesCell(k, common, cellOf)
    );
    tr.onclick = () => onPick(k);
    table.appendChild(tr);
  }
  return table;
}
function launchDetails(box, k) {
  const launch = Object.entries(k.launch || {}).filter(([a]) => a !== "autotune_us");
  const took = (k.launch || {}).autotune_us;
  const tuning = took ? ` (chosen by autotuning: compiling and timing the candidates took ${(took / 1e3).toFixed(1)} ms)` : "";
  if (launch.length) box.appendChild(el("div", { "data-launch": "" }, `launch: ${launch.map(([a, b]) => `${a}=${b}`).join(", ")}${tuning}`));
  if (k.autotune && k.autotune.length) box.appendChild(autotuneTable(k.autotune));
  if (k.grid.length) box.appendChild(el("div", { "data-grid": "" }, `launched with grid (${k.grid.join(", ")}), block (${k.block.join(", ")})` + (k.registers ? `, ${k.registers} registers per thread` : "") + " (profiler)"));
}
function autotuneTable(choices) {
  const box = el("details", { class: "cs-text", "data-autotune": String(choices.length) });
  const chosen = choices.find((c) => c.chosen);
  box.appendChild(el("summary", {}, `autotuned: ${choices.length} configs benchmarked${chosen ? `; chosen ${chosen.config} (${chosen.ms === null ? "failed" : `${(chosen.ms * 1e3).toFixed(1)} us`})` : ""}`));
  const table = el("table", { class: "cs-table" });
  const head = el("tr");
  for (const h of ["config", "time", "registers", "spills", ""]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  const order = [...choices].sort((a, b) => (a.ms === null) - (b.ms === null) || a.ms - b.ms);
  for (const c of order) {
    const tr = el("tr");
    tr.append(
      el("td", {}, c.config),
      el("td", {}, c.ms === null ? "failed" : `${(c.ms * 1e3).toFixed(1)} us`),
      el("td", {}, c.registers ?? ""),
      el("td", {}, c.spills ?? ""),
      el("td", {}, c.chosen ? "chosen" : "")
    );
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}
function irDetails(box, k) {
  for (const [stage, text] of Object.entries(k.ir || {})) {
    const d = el("details", { class: "cs-text", "data-ir": stage });
    d.appendChild(el("summary", {}, `Triton IR: ${stage.toUpperCase()} (${text.split("\n").length} lines, from Triton's cache)`));
    d.appendChild(el("pre", {}, text));
    box.appendChild(d);
  }
  if (k.lang === "triton" && !Object.keys(k.ir || {}).length) box.appendChild(el("div", { class: "cs-muted" }, "Triton IR: not found in Triton's cache (a log read offline, or a cache hit from another process)"));
}
function renderCode(codePane, data, choice, links) {
  const cellOf = cellNumbers(data);
  let columns = null;
  codePane.classList.add("cs-codepane");
  const kernelList = el("div", { class: "cs-kernels" });
  const kernelShow = el("div", { class: "cs-kernel" });
  codePane.append(choice.select(() => renderKernels()), kernelList, kernelShow);
  function renderKernels() {
    const c = data.compiles[choice.index];
    kernelList.textContent = "";
    kernelShow.textContent = "";
    if (columns) {
      columns.dispose();
      columns = null;
    }
    if (!c.kernels.length) {
      kernelList.appendChild(el("p", { class: "cs-muted" }, "no generated code for this compile id (backend without Inductor, or nothing to compile)"));
      return;
    }
    const table = kernelTable(c, cellOf, (k) => showKernel(c, k));
    const box = el("div", { "data-table": "kernels" });
    box.appendChild(table);
    kernelList.appendChild(box);
    columns = fitColumns(box, table, KERNEL_FOLD);
    if (c.backward_pending) kernelList.appendChild(el("p", { class: "cs-muted", "data-backward-pending": "" }, "No backward kernels: Inductor compiles the backward at its first call, and this code did not run backward. The backward graph is in the Graphs tab."));
    showKernel(c, c.kernels.find((k) => k.lang !== "extern") || c.kernels[0], true);
    for (const o of c.output_code) {
      const d = el("details", { class: "cs-text" });
      d.appendChild(el("summary", {}, `whole output code (${o.role || o.aot_id || "module"})`));
      d.appendChild(highlight(o.text));
      kernelList.appendChild(d);
    }
  }
  function showKernel(c, k, quiet) {
    kernelShow.textContent = "";
    for (const row of kernelList.querySelectorAll(".cs-kernel-row")) row.classList.toggle("cs-on", row.getAttribute("data-kernel") === k.name);
    kernelShow.appendChild(el("h4", { title: k.name }, `${k.lang} kernel ${k.name}`));
    if (k.time) kernelShow.appendChild(el("div", {}, `time per call: ${formatSpread(k.time)}, ${k.calls_per_run} calls per run`));
    if (k.bandwidth) kernelShow.appendChild(el("div", {}, `achieved bandwidth: ${(k.bandwidth / 1e9).toFixed(1)} GB/s (Inductor's estimate of ${(k.bytes / 1e6).toFixed(3)} MB moved per call, over the median)`));
    const lines = k.lines.filter(Boolean);
    if (!quiet) links.markLines(lines);
    kernelShow.setAttribute("data-lines", String(lines.length));
    if (k.fused.length && k.post_graph !== null && k.post_graph !== void 0) {
      const b = el("button", { class: "cs-link", "data-link": "fused" }, `show its ${k.fused.length} post-grad nodes in the graph`);
      b.onclick = () => links.openGraph(choice.index, k.post_graph, k.fused);
      kernelShow.appendChild(b);
      kernelShow.appendChild(el("div", { class: "cs-muted" }, `fuses: ${k.fused.join(", ")}`));
    } else {
      kernelShow.appendChild(el("div", { class: "cs-muted" }, "no provenance recorded for this kernel"));
    }
    if (lines.length) kernelShow.appendChild(el("div", { class: "cs-muted" }, `from lines: ${lines.map((l) => formatLocation(l, cellOf)).join(", ")}`));
    if (k.aten.length) kernelShow.appendChild(el("div", { class: "cs-muted" }, `ATen ops: ${k.aten.join(", ")}`));
    launchDetails(kernelShow, k);
    kernelShow.appendChild(highlight(k.source || "(an extern call: no generated source)"));
    irDetails(kernelShow, k);
  }
  function openKernel(ci, name) {
    choice.set(ci);
    links.showTab("code");
    const k = data.compiles[ci].kernels.find((x) => x.name === name);
    if (k) showKernel(data.compiles[ci], k);
  }
  return { openKernel, dispose: () => {
    if (columns) columns.dispose();
  } };
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
    const { boxes, edges, highlight: highlight2, rep, selected } = s;
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
    if (highlight2.size) {
      for (const v of highlight2) if (rep[v] >= 0) litGroups.add(rep[v]);
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
    if (highlight2.size) {
      ctx.strokeStyle = "#e8710a";
      ctx.lineWidth = 2 / view.k;
      ctx.beginPath();
      for (const [a, b, u, v] of edges) {
        if (!(highlight2.has(u) && highlight2.has(v))) continue;
        edgePath(boxes[a], boxes[b]);
      }
      ctx.stroke();
      ctx.lineWidth = 1 / view.k;
    }
    boxes.forEach((b, index) => {
      if (b.kind === "group" && b.open) return;
      if (!inView(b)) return;
      const on = !highlight2.size || (b.kind === "node" ? highlight2.has(b.id) : litGroups.has(index));
      ctx.globalAlpha = on ? 1 : 0.3;
      if (b.kind === "group") {
        ctx.fillStyle = "#eef2ff";
        ctx.strokeStyle = on && highlight2.size ? "#e8710a" : "#6366f1";
        ctx.fillRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.strokeRect(b.x + 3, b.y + 3, b.w, b.h);
        ctx.fillRect(b.x, b.y, b.w, b.h);
        ctx.strokeRect(b.x, b.y, b.w, b.h);
        const grp = g.groups[b.id];
        labels.push([b, [`\u25B8 ${groupText(g, b.id)}`, `${grp.size} nodes, ${grp.ops} ops`], ["#312e81", "#555"], on, false]);
      } else {
        const v = b.id;
        ctx.fillStyle = highlight2.has(v) ? "#fde68a" : S(g.note[v]) === "recomputed in backward" ? "#fed7aa" : OP_FILL[g.op[v]] || "#fff";
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

// ext/compilescope/static/partition.js
var folds = { saved: false, recomputed: false };
function fold(key, summary) {
  const box = el("details", { class: `cs-fold-${key}`, "data-fold": key });
  box.open = folds[key];
  box.addEventListener("toggle", () => {
    folds[key] = box.open;
  });
  box.appendChild(el("summary", {}, summary));
  return box;
}
function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
function renderPartition(parent, c, onSaved) {
  const p = c.partition;
  const activations = p.activation_bytes !== null && p.activation_bytes !== void 0 ? `, activation memory ${formatBytes(p.activation_bytes)}` : "";
  const box = fold("saved", `saved for backward: ${plural(c.saved.length, "tensor")}${c.saved_text ? ` (${c.saved_text})` : ""}${activations}`);
  parent.appendChild(box);
  box.appendChild(el("div", { class: "cs-partition-head" }, p.headline));
  if (p.held && p.held.text) box.appendChild(heldBlock(p.held));
  box.appendChild(el("div", { class: "cs-muted" }, "Click a saved tensor to see where the forward makes it and where the backward uses it."));
  const body = el("div", { class: "cs-partition-body" });
  const table = el("table", { class: "cs-table cs-saved-table" });
  const hr = el("tr");
  for (const h of ["saved", "type", "bytes", "what it is", "backward users"]) hr.appendChild(el("th", {}, h));
  table.appendChild(hr);
  const rank = (s) => (p.kinds[s.name] || "").startsWith("activation") ? 0 : 1;
  const rows = [...c.saved].sort((a, b) => rank(a) - rank(b) || (b.bytes || 0) - (a.bytes || 0));
  for (const s of rows) {
    const tr = el("tr", { class: "cs-saved-row", "data-kind": (p.kinds[s.name] || "").split(" ")[0] });
    tr.append(
      el("td", {}, s.name),
      el("td", {}, s.type),
      el("td", {}, formatBytes(s.bytes)),
      el("td", {}, p.kinds[s.name] || ""),
      el("td", {}, String(s.users.length))
    );
    tr.onclick = () => onSaved(s);
    table.appendChild(tr);
  }
  body.appendChild(table);
  box.appendChild(body);
  if (p.recomputed.length) {
    const again = fold("recomputed", `recomputed in the backward: ${plural(p.recomputed.length, "node")}`);
    again.appendChild(el(
      "div",
      { class: "cs-muted cs-recomputed" },
      `orange in the partition graph; dashed purple edges cross the cut: ${p.recomputed.join(", ")}`
    ));
    parent.appendChild(again);
  }
  if (p.sweep) body.appendChild(sweepChart(p.sweep, p.sweep_flops, p.sweep_basis));
  else if (p.lab) body.appendChild(el("div", { class: "cs-muted" }, `budget sweep: not available: ${p.lab}`));
  else body.appendChild(el("div", { class: "cs-muted" }, `budget sweep: not run for this compile (its joint graph is large); run ${p.hint} and show the capture again`));
}
function heldBlock(held) {
  const block = el("div", { class: "cs-held" }, held.text);
  if (held.differences.length) {
    const list = el("ul", { class: "cs-held-differences" });
    for (const d of held.differences) list.appendChild(el("li", { "data-what": d.what }, `${d.saved}: ${d.detail}`));
    block.appendChild(list);
  }
  return block;
}
function sweepChart(points, byFlops, basis) {
  const NS = "http://www.w3.org/2000/svg";
  const W = 480, H = 240, L = 64, R = 16, T = 24, B = 40;
  const svgEl = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== void 0) e.textContent = String(text);
    return e;
  };
  const yOf = (q) => byFlops ? q.recompute_flops / 1e6 : q.recomputed_ops;
  const unit = Math.max(...points.map((q) => q.activation_bytes)) >= 2 ** 20 ? ["MiB", 2 ** 20] : ["KiB", 1024];
  const xs = points.map((q) => q.activation_bytes / unit[1]), ys = points.map(yOf);
  const xMax = Math.max(...xs) || 1, yMax = Math.max(...ys) || 1;
  const px = (x) => L + x / xMax * (W - L - R), py = (y) => H - B - y / yMax * (H - T - B);
  const wrap = el("div", { class: "cs-sweep" });
  const svg = svgEl("svg", { width: W, height: H, class: "cs-sweep-chart", "font-family": "sans-serif", "font-size": 11 });
  svg.appendChild(svgEl("text", { x: L, y: 14, "font-weight": "bold" }, "activation memory budget sweep (predicted)"));
  svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#9ca3af" }));
  svg.appendChild(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#9ca3af" }));
  svg.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, `activation memory (${unit[0]})`));
  svg.appendChild(svgEl("text", { x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle" }, byFlops ? "recomputed MFLOP (matmul, conv)" : "recomputed ops"));
  for (const [v, y] of [[0, H - B + 14], [xMax, H - B + 14]]) svg.appendChild(svgEl("text", { x: px(v), y, "text-anchor": "middle", fill: "#555" }, v.toFixed(2)));
  for (const v of [0, yMax]) svg.appendChild(svgEl("text", { x: L - 4, y: py(v) + 4, "text-anchor": "end", fill: "#555" }, byFlops ? v.toFixed(1) : String(v)));
  const minCut = points.filter((q) => q.partitioner === "min_cut");
  svg.appendChild(svgEl("polyline", { points: minCut.map((q) => `${px(q.activation_bytes / unit[1])},${py(yOf(q))}`).join(" "), fill: "none", stroke: "#6366f1" }));
  const detail = el("div", { class: "cs-muted cs-sweep-detail" }, "Hover or click a point: min-cut at a budget (circles), the default partitioner (square), the compile's own choice (ringed in red).");
  const describe = (q) => `${q.partitioner}${q.partitioner === "min_cut" ? `, budget ${q.budget}` : ""}${q.captured ? " (what the compile did)" : ""}: activations ${formatBytes(q.activation_bytes)}, ${q.saved} saved, ${q.recomputed_ops} ops recomputed${q.recompute_flops !== null ? `, ${(q.recompute_flops / 1e6).toFixed(1)} MFLOP` : ""}`;
  const sameSpot = /* @__PURE__ */ new Map();
  points.forEach((q, i) => {
    const k = `${q.partitioner} ${xs[i]} ${ys[i]}`;
    sameSpot.set(k, [...sameSpot.get(k) || [], q]);
  });
  points.forEach((q, i) => {
    const x = px(xs[i]), y = py(ys[i]);
    const spot = sameSpot.get(`${q.partitioner} ${xs[i]} ${ys[i]}`);
    const title = spot.length > 1 && q.partitioner === "min_cut" ? `budgets ${spot.map((o) => o.budget).join(", ")}: the same partition. ${describe(q)}` : describe(q);
    const mark = q.partitioner === "default" ? svgEl("rect", { x: x - 5, y: y - 5, width: 10, height: 10, fill: "#f59e0b", class: "cs-sweep-point" }) : svgEl("circle", { cx: x, cy: y, r: 5, fill: "#6366f1", class: "cs-sweep-point" });
    mark.setAttribute("data-budget", String(q.budget));
    mark.setAttribute("data-partitioner", q.partitioner);
    mark.appendChild(svgEl("title", {}, title));
    mark.style.cursor = "pointer";
    mark.addEventListener("click", () => {
      detail.textContent = title;
    });
    svg.appendChild(mark);
    if (q.captured) svg.appendChild(svgEl("circle", { cx: x, cy: y, r: 10, fill: "none", stroke: "#dc2626", "stroke-width": 2, class: "cs-sweep-captured" }));
  });
  wrap.append(svg, detail);
  if (basis) wrap.appendChild(el("div", { class: "cs-muted cs-sweep-basis" }, basis));
  return wrap;
}

// ext/compilescope/static/result_graphs.js
function renderGraphs(pane, data, choice, links) {
  const stages = data.stages || [];
  const savedStages = new Set(stages.filter((s) => s.saved).map((s) => s.kind));
  const partitionKind = (stages.find((s) => !s.logged) || {}).kind;
  const explorers = /* @__PURE__ */ new Map();
  let shown = null;
  const stageBar = el("div", { class: "cs-stagebar" });
  const graphArea = el("div", { class: "cs-grapharea" });
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
        inCell: (file) => data.cells.some((cell) => cell.file === file)
      });
      explorers.set(graphIndex, ex);
    }
    return ex;
  }
  function openGraph(ci, graphIndex, names, quiet) {
    if (ci !== choice.index) {
      choice.mark(ci, onCompile);
      renderStages();
    }
    const c = data.compiles[ci];
    const st = c.stages.find((s) => s.graph === graphIndex);
    stageIndex = c.stages.indexOf(st);
    for (const b of stageBar.children) b.classList.toggle("cs-on", b.getAttribute("data-graph") === String(st.graph));
    for (const ex2 of explorers.values()) ex2.root.style.display = "none";
    const ex = explorerFor(ci, graphIndex);
    ex.root.style.display = "";
    shown = ex;
    textBox.textContent = "";
    textBox.style.display = st.text ? "" : "none";
    if (st.text) {
      textBox.appendChild(el("summary", {}, "graph as torch printed it"));
      textBox.appendChild(highlight(st.text));
    }
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
    redraw: () => {
      if (shown) shown.redraw();
    },
    dispose: () => {
      for (const ex of explorers.values()) ex.dispose();
    }
  };
}

// ext/compilescope/static/result_guards.js
function symbolTable(c) {
  const t = el("table", { class: "cs-table" });
  const hr = el("tr");
  for (const h of ["symbol", "source", "value", "range"]) hr.appendChild(el("th", {}, h));
  t.appendChild(hr);
  for (const s of c.symbols) {
    const tr = el("tr");
    tr.append(mathCell(s.math, s.name), el("td", {}, s.source), el("td", {}, s.value), el("td", { class: "cs-math" }, s.range));
    t.appendChild(tr);
  }
  return t;
}
function renderGuards(pane, data, choice) {
  const guardBox = el("div");
  pane.append(choice.select(() => renderCompile()), guardBox);
  function renderCompile() {
    const c = data.compiles[choice.index];
    guardBox.textContent = "";
    if (c.symbols.length) {
      guardBox.appendChild(el("h4", {}, "symbols"));
      guardBox.appendChild(symbolTable(c));
    }
    if (c.shape_guards.length) {
      guardBox.appendChild(el("h4", {}, "guards on symbolic shapes"));
      for (const gd of c.shape_guards) {
        const d = mathCell(gd.math, gd.expr, "div");
        d.title = gd.expr;
        if (gd.loc) d.appendChild(el("span", { class: "cs-muted" }, `  ${gd.loc[0].split("/").pop()}:${gd.loc[1]}`));
        guardBox.appendChild(d);
      }
    }
    if (!c.symbols.length && !c.shape_guards.length) guardBox.appendChild(el("p", { class: "cs-muted" }, "static shapes: no symbols (use --dynamic to see symbolic shapes)"));
    if (c.guards) {
      guardBox.appendChild(el("h4", {}, "Dynamo guards"));
      guardBox.appendChild(el("pre", { class: "cs-pre" }, c.guards));
    }
  }
}

// ext/compilescope/static/findings.js
var SHOWN = 8;
function findingItem(f, showLine, actions) {
  const item = el("li", { class: "cs-finding", "data-kind": f.kind, "data-finding": String(f.number) });
  const head = el("div", { class: "cs-finding-what" });
  head.appendChild(el("span", { class: "cs-finding-kind" }, f.kind.replace(/_/g, " ")));
  head.appendChild(el("b", {}, ` ${f.what}`));
  if (f.gb_id) head.appendChild(el("span", { class: "cs-muted" }, ` ${f.gb_id}`));
  item.appendChild(head);
  if (f.where) {
    const where = el("div", { class: "cs-finding-where" }, `where: ${f.where}`);
    const user = f.user_loc;
    if (user && showLine) {
      where.classList.add("cs-link-like");
      where.onclick = () => showLine(user[0], user[1]);
    }
    item.appendChild(where);
  }
  if (f.often) item.appendChild(el("div", {}, `how often: ${f.often}`));
  if (f.cost) item.appendChild(el("div", {}, `cost: ${f.cost}`));
  for (const fix of f.fixes.slice(0, 2)) {
    const box = el("div", { class: "cs-fix", "data-fix-kind": fix.kind });
    const title = fix.title && fix.title !== fix.python ? fix.title : "";
    box.appendChild(el("div", {}, `fix${title ? `: ${title}` : ""}${fix.where ? ` (at ${fix.where})` : ""}`));
    box.appendChild(el("pre", { class: "cs-code cs-fix-code" }, fix.python || fix.change));
    if (fix.tradeoff) box.appendChild(el("div", { class: "cs-muted" }, fix.tradeoff));
    item.appendChild(box);
  }
  if (f.tryable && actions) {
    const button = el("button", { class: "cs-try-fix", "data-try": String(f.number) }, "try this fix");
    button.title = "capture the cell again with this fix applied (settings restored after), then compare";
    button.onclick = () => {
      button.disabled = true;
      button.textContent = "running again with the fix\u2026";
      actions.tryFix(f.number);
    };
    item.appendChild(button);
  } else if (f.applying) {
    const box = el("div", { class: "cs-apply-fix", "data-applying": String(f.number) });
    box.appendChild(el("div", {}, "to try this fix, run your code again inside compilescope.applying (settings restored after):"));
    const code = el("pre", { class: "cs-code cs-fix-code" }, f.applying);
    const copy = el("button", { class: "cs-btn cs-copy", "data-copy": "" }, "copy");
    copy.onclick = () => {
      if (navigator.clipboard) navigator.clipboard.writeText(f.applying).then(() => {
        copy.textContent = "copied";
      }, () => {
      });
    };
    box.append(code, copy);
    item.appendChild(box);
  }
  if (f.message) {
    const raw = el("details", { class: "cs-finding-raw" });
    raw.appendChild(el("summary", {}, "torch's message"));
    raw.appendChild(el("pre", { class: "cs-pre" }, f.message));
    item.appendChild(raw);
  }
  return item;
}
function firstCompileS(data) {
  const times = data.compiles.map((c) => c.compile_s).filter((t) => t !== null && t !== void 0);
  return times.length ? times.reduce((a, b) => a + b, 0) : null;
}
function renderTrial(box, trial, data) {
  box.textContent = "";
  if (!trial) return;
  box.setAttribute("data-trial", trial.error ? "failed" : "done");
  box.appendChild(el("b", {}, trial.python && trial.title !== trial.python ? `tried: ${trial.title}` : "tried:"));
  if (trial.python) box.appendChild(el("pre", { class: "cs-code cs-fix-code" }, trial.python));
  if (trial.error) {
    box.appendChild(el("div", { class: "cs-warn" }, `the second capture failed: ${trial.error}`));
    return;
  }
  const table = el("table", { class: "cs-table cs-trial-table" });
  const head = el("tr");
  for (const h of ["", "before", "after", "change"]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  for (const [name, a, b, change] of trial.changes || []) {
    const tr = el("tr", { "data-figure": name });
    tr.append(el("td", {}, name), el("td", {}, a), el("td", {}, b), el("td", { class: "cs-change" }, change));
    table.appendChild(tr);
  }
  box.appendChild(table);
  if (trial.baseline) {
    const first = firstCompileS(data);
    const said = trial.rerun_baseline && first !== null ? `; the capture above compiled in ${first.toFixed(1)} s` : "";
    box.appendChild(el("div", { class: "cs-muted", "data-baseline": "" }, `${trial.baseline}${said}`));
  }
  const left = trial.left || [];
  box.appendChild(el("div", { "data-left": String(left.length) }, left.length ? `left after the fix: ${left.join("; ")}` : "left after the fix: no graph breaks"));
  const speedup = trial.step_speedup;
  if (speedup) box.appendChild(el("div", { class: "cs-step-speedup", "data-verdict": speedup.verdict }, `real steps: ${speedup.text}`));
}
function renderFindings(p, data, showLine, actions) {
  const found = data.findings || [];
  const section = el("div", { class: "cs-findings", "data-findings": String(found.length) });
  section.appendChild(el("h4", {}, found.length ? `Findings (${found.length}), costliest first` : "Findings"));
  if (!found.length) {
    section.appendChild(el("div", { class: "cs-muted", "data-findings-none": "" }, data.findings_none || "no findings: nothing broke, recompiled or stood out"));
    p.appendChild(section);
    return;
  }
  const list = el("ol", { class: "cs-finding-list" });
  for (const f of found.slice(0, SHOWN)) list.appendChild(findingItem(f, showLine, actions));
  section.appendChild(list);
  if (found.length > SHOWN) {
    const more = el("details", { class: "cs-findings-more" });
    more.appendChild(el("summary", {}, `${found.length - SHOWN} more`));
    const rest = el("ol", { class: "cs-finding-list", start: String(SHOWN + 1) });
    for (const f of found.slice(SHOWN)) rest.appendChild(findingItem(f, showLine, actions));
    more.appendChild(rest);
    section.appendChild(more);
  }
  const trialBox = el("div", { class: "cs-fix-trial" });
  section.appendChild(trialBox);
  const show = (trial) => {
    for (const b of section.querySelectorAll(".cs-fix-trial")) {
      b.textContent = "";
      b.removeAttribute("data-trial");
    }
    if (!trial) return;
    const item = trial.number ? section.querySelector(`.cs-finding[data-finding="${trial.number}"]`) : null;
    let box = trialBox;
    if (item) {
      box = item.querySelector(":scope > .cs-fix-trial") || el("div", { class: "cs-fix-trial" });
      const button = item.querySelector(":scope > .cs-try-fix");
      item.insertBefore(box, button ? button.nextSibling : null);
      if (item.closest("details")) item.closest("details").open = true;
    }
    renderTrial(box, trial, data);
  };
  if (actions) {
    show(actions.trial());
    actions.onTrial((trial) => {
      show(trial);
      for (const b of section.querySelectorAll(".cs-try-fix")) {
        b.disabled = false;
        b.textContent = "try this fix";
      }
    });
  }
  p.appendChild(section);
}

// ext/compilescope/static/result_overview.js
function renderSaid(data, openCompile) {
  const n = data.messages.length;
  const said = el("details", { class: "cs-said", "data-said": String(n) });
  said.open = true;
  said.appendChild(el("summary", {}, `torch said (${n} warning${n > 1 ? "s" : ""})`));
  for (const m of data.messages) {
    const row = el("div", { class: "cs-said-item" });
    const ci = data.compiles.findIndex((c) => c.id === m.compile_id);
    if (ci >= 0) {
      const link = el("button", { class: "cs-link", "data-link": "compile" }, m.compile_id);
      link.style.display = "inline";
      link.onclick = () => openCompile(ci);
      row.appendChild(link);
    } else if (m.compile_id) row.appendChild(el("span", {}, `[${m.compile_id}] `));
    row.appendChild(el("span", { class: "cs-muted" }, ` ${m.origin} ${m.where}${m.count > 1 ? ` (${m.count} times)` : ""}`));
    row.appendChild(el("pre", {}, m.text));
    said.appendChild(row);
  }
  return said;
}
var COMPILE_FOLD = [["activations", "activations for bwd"], ["ops", "ops per stage"], ["kernels", "kernels"], ["time", "compile time"]];
function foldRestarts(compiles) {
  const rows = [], byBase = /* @__PURE__ */ new Map();
  compiles.forEach((c, ci) => {
    const m = /^(.*\/\d+)_(\d+)$/.exec(c.id);
    const base = m ? m[1] : c.id;
    const row = byBase.get(base);
    if (row && m) {
      row.earlier.push(compiles[row.ci]);
      row.ci = ci;
      return;
    }
    const fresh = { ci, earlier: [] };
    byBase.set(base, fresh);
    rows.push(fresh);
  });
  return rows;
}
function compileTable(data, openCompile) {
  const table = el("table", { class: "cs-table cs-compiles" });
  const hr = el("tr");
  const heads = [["id", "compile id"], ["status", "status"], ["frame", "frame"], ["ops", "ops per stage"], ["kernels", "kernels"], ["activations", "activations for bwd"], ["time", "compile time"]];
  for (const [key, h] of heads) hr.appendChild(el("th", { "data-col": key }, h));
  table.appendChild(hr);
  const drawnHere = new Set((data.stages || []).filter((s) => !s.logged).map((s) => s.kind));
  for (const { ci, earlier } of foldRestarts(data.compiles)) {
    const c = data.compiles[ci];
    const tr = el("tr", { "data-compile": c.id, "data-attempts": [...earlier.map((e) => e.id), c.id].join(" ") });
    const idButton = el("button", { class: "cs-link" }, c.id);
    idButton.onclick = () => openCompile(ci);
    const td = el("td", { class: "cs-nowrap", "data-col": "id" });
    td.appendChild(idButton);
    tr.appendChild(td);
    if (earlier.length) {
      const why = (c.restarts || []).map((r) => String(r).split("\n")[0]).join("; ");
      td.appendChild(el("span", { class: "cs-muted cs-restart", title: `Dynamo restarted ${earlier.map((e) => e.id).join(", ")} and compiled again as ${c.id}${why ? `: ${why}` : ""}` }, ` \u21BB ${earlier.map((e) => e.id).join(", ")}`));
    }
    const status = el("td", { class: "cs-nowrap", "data-col": "status" }, c.status);
    if (c.incomplete) status.appendChild(el("span", { class: "cs-warn", "data-incomplete": "", title: c.incomplete }, " incomplete"));
    tr.appendChild(status);
    const f = c.frame;
    if (f.cell !== null) tr.appendChild(el("td", { class: "cs-nowrap", "data-col": "frame" }, formatCell(f.cell)));
    else tr.appendChild(el("td", { class: "cs-frame", "data-col": "frame" }, (f.label || "").replace(/cell \[(\d+)\] line (\d+)/g, "cell\xA0[$1]\xA0line\xA0$2")));
    tr.appendChild(el("td", { class: "cs-ops", "data-col": "ops" }, c.stages.filter((s) => !drawnHere.has(s.kind)).map((s) => `${s.label} ${s.ops}`).join(", ")));
    tr.appendChild(el("td", { "data-col": "kernels" }, c.kernels.length || ""));
    tr.appendChild(el("td", { "data-col": "activations" }, c.partition ? `${c.activation_text} (${c.saved_text} saved)` : ""));
    const times = [...earlier, c].map((x) => x.compile_s).filter((t) => t !== null && t !== void 0);
    tr.appendChild(el("td", { class: "cs-nowrap", "data-col": "time" }, times.length ? `${times.reduce((a, t) => a + t, 0).toFixed(2)} s` : ""));
    table.appendChild(tr);
  }
  const scroll = el("div", { class: "cs-scroll-x", "data-table": "compiles" });
  scroll.appendChild(table);
  return { scroll, columns: fitColumns(scroll, table, COMPILE_FOLD) };
}
function renderRawBreaks(p, data, showLine) {
  const covered = /* @__PURE__ */ new Set();
  for (const f of data.findings || []) {
    if (f.message) for (const id of f.compile_ids) covered.add(id);
  }
  const byReason = /* @__PURE__ */ new Map();
  data.compiles.forEach((c) => {
    if (covered.has(c.id)) return;
    for (const b of c.breaks) {
      if (!byReason.has(b.reason)) byReason.set(b.reason, { ids: [], loc: b.loc, cell: b.cell });
      byReason.get(b.reason).ids.push(c.id);
    }
  });
  const total = [...byReason.values()].reduce((n, r) => n + r.ids.length, 0);
  if (!total) return;
  const box = el("details", { class: "cs-raw-breaks", "data-breaks": String(total) });
  box.appendChild(el("summary", {}, `graph breaks: ${total} in ${byReason.size} message${byReason.size > 1 ? "s" : ""} (torch's text)`));
  for (const [reason, r] of byReason) {
    const where = r.loc ? r.cell !== null ? ` at ${formatCell(r.cell, r.loc[1])}` : ` at ${r.loc[0]}:${r.loc[1]}` : "";
    const div = el("div", { class: "cs-break" });
    div.appendChild(el("div", { class: "cs-warn" }, `graph break in ${r.ids.join(", ")}${where}`));
    div.appendChild(el("pre", { class: "cs-pre" }, reason));
    if (r.loc) div.onclick = () => showLine(r.loc[0], r.loc[1]);
    box.appendChild(div);
  }
  p.appendChild(box);
}
function renderFallbacks(p, data, showLine) {
  const rows = [];
  data.compiles.forEach((c) => {
    for (const f of c.fallbacks || []) rows.push([c.id, f]);
  });
  if (!rows.length) return;
  const box = el("details", { class: "cs-raw-breaks", "data-fallbacks": String(rows.length) });
  box.appendChild(el("summary", {}, `fallbacks to eager: ${rows.length} (not graph breaks; torch's text)`));
  for (const [id, f] of rows) {
    const where = f.loc ? f.cell !== null ? ` at ${formatCell(f.cell, f.loc[1])}` : ` at ${f.loc[0]}:${f.loc[1]}` : "";
    const div = el("div", { class: "cs-break" });
    div.appendChild(el("div", { class: "cs-warn" }, `${id}: ${f.what}${where}`));
    div.appendChild(el("pre", { class: "cs-pre" }, f.reason));
    if (f.loc) div.onclick = () => showLine(f.loc[0], f.loc[1]);
    box.appendChild(div);
  }
  p.appendChild(box);
}
function renderOverview(p, data, links, actions) {
  const { openCompile, showLine } = links;
  renderFindings(p, data, showLine, actions);
  if (data.ranks_html) {
    const holder = el("div", { class: "cs-rank-report" });
    holder.innerHTML = data.ranks_html;
    p.appendChild(holder);
  }
  let columns = null;
  if (data.compiles.length) {
    const table = compileTable(data, openCompile);
    if (data.compile_line) p.appendChild(el("div", { class: "cs-muted", "data-compile-time": "" }, data.compile_line));
    p.appendChild(table.scroll);
    columns = table.columns;
  } else p.appendChild(el("p", { class: "cs-empty", "data-no-compiles": "" }, data.nothing_compiled || "no compile ids in this capture."));
  renderRawBreaks(p, data, showLine);
  renderFallbacks(p, data, showLine);
  data.compiles.forEach((c) => {
    for (const r of c.recompiles) p.appendChild(el("div", {}, `${c.id} recompiled: ${r}`));
    if (c.failure && !(c.fallbacks || []).some((f) => f.scope === "frame")) p.appendChild(el("pre", { class: "cs-pre cs-warn" }, `${c.id} failed: ${c.failure}`));
  });
  if (data.messages && data.messages.length) p.appendChild(renderSaid(data, openCompile));
  if (data.charts && data.charts.stages) {
    const holder = el("div", { class: "cs-chart", "data-chart": "stages" });
    holder.innerHTML = data.charts.stages;
    p.appendChild(holder);
  }
  return { dispose: () => {
    if (columns) columns.dispose();
  } };
}

// ext/compilescope/static/result_repro.js
function renderRepro(pane, data, choice) {
  const reproBox = el("div");
  pane.append(choice.select(() => renderCompile()), reproBox);
  function renderCompile() {
    const c = data.compiles[choice.index];
    reproBox.textContent = "";
    if (!c.repros.length) {
      reproBox.appendChild(el("p", { class: "cs-muted" }, "torch logged no runnable repro (fx_graph_runnable) for this compile id"));
      return;
    }
    c.repros.forEach((script, i) => {
      const name = `repro_${c.id.replace(/[^0-9A-Za-z]+/g, "_")}_${i}.py`;
      const copy = el("button", { class: "cs-btn" }, `copy ${name}`);
      copy.onclick = () => navigator.clipboard && navigator.clipboard.writeText(script);
      const save = el("a", { class: "cs-btn", download: name }, "save");
      save.href = URL.createObjectURL(new Blob([script], { type: "text/x-python" }));
      reproBox.append(copy, save, highlight(script));
    });
  }
}

// ext/compilescope/static/timings.js
function realSteps(r, synthetic) {
  const box = el("div", { class: "cs-real-steps", "data-real-steps": "" });
  box.appendChild(el("h4", {}, `Your steps as they ran (${r.device}; median of ${r.compiled.n})`));
  const eager = r.eager ? `; eager ${formatSpread(r.eager)}${r.speedup ? ` (compiled is ${r.speedup.toFixed(2)}x)` : ""}` : "";
  box.appendChild(el("div", { "data-real-wall": "" }, `per step: compiled ${formatSpread(r.compiled)}${eager}`));
  if (r.budget && r.budget.length) box.appendChild(stepBudget(r));
  if (r.split_wall) {
    box.appendChild(el("div", { class: "cs-muted" }, `the parts were measured in the next ${r.split_wall.n} steps with every kernel wrapped${r.device === "cpu" ? "" : " and the profiler on"} (${formatMs(r.split_wall.median)} a step there); kernel times are the kernels' own`));
    if (r.busy_s !== null && r.busy_s !== void 0) box.appendChild(el("div", { class: "cs-muted" }, `device busy ${formatMs(r.busy_s)} per step`));
  }
  if (r.note) box.appendChild(el("div", { class: "cs-muted" }, r.note));
  box.appendChild(el("div", { class: "cs-muted" }, `A step runs from one optimizer.step() to the next.${synthetic ? SYNTHETIC : ""}`));
  return box;
}
function stepBudget(r) {
  const total = r.compiled.median;
  const wrap = el("div", { class: "cs-step-budget", "data-step-budget": "" });
  const bar = el("div", { class: "cs-budget-bar", role: "img", "aria-label": "where the step goes" });
  for (const p of r.budget) {
    if (p.s <= 0) continue;
    const seg = el("span", { class: `cs-budget-${p.kind}`, title: `${p.name}: ${formatMs(p.s)} (${(100 * p.share).toFixed(1)}%)` });
    seg.style.width = `${Math.max(0, Math.min(100, 100 * p.share))}%`;
    bar.appendChild(seg);
  }
  wrap.appendChild(bar);
  const table = el("table", { class: "cs-table cs-real-split" });
  const head = el("tr");
  for (const h of ["where the step goes", "per step", "share", "what it is"]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  const row = (label, s, share, detail, attrs, kind) => {
    const tr = el("tr", attrs || {});
    const name = el("td", {});
    if (kind) name.appendChild(el("span", { class: `cs-swatch cs-budget-${kind}` }));
    name.appendChild(document.createTextNode(label));
    tr.append(name, el("td", {}, formatMs(s)), el("td", {}, `${(100 * share).toFixed(1)}%`), el("td", { class: "cs-muted" }, detail));
    table.appendChild(tr);
  };
  for (const p of r.budget) {
    const attrs = { "data-budget-kind": p.kind };
    if (p.kind === "optimizer") attrs["data-part-optimizer"] = "";
    row(p.name, p.s, p.share, p.detail, attrs, p.kind);
  }
  for (const g of (r.gaps || []).slice(0, 5)) {
    const tr = el("tr", { class: "cs-muted", "data-part-gap": "" });
    tr.append(el("td", { class: "cs-part" }, `incl. between graphs ${g.before} \u2192 ${g.after} (${g.role})`), el("td", {}, formatMs(g.s)), el("td", {}, total > 0 ? `${(100 * g.s / total).toFixed(1)}%` : ""), el("td", {}, ""));
    table.appendChild(tr);
  }
  row("whole step", total, 1, `stopwatch median of ${r.compiled.n} steps`, { "data-budget-kind": "step" });
  wrap.appendChild(table);
  return wrap;
}
var SYNTHETIC = " The per-graph figures below are each graph re-run alone (synthetic), for eager-vs-compiled per graph.";
function renderTimings(p, data, openKernel) {
  const measured = data.compiles.filter((c) => c.timing);
  if (data.real_steps) p.appendChild(realSteps(data.real_steps, measured.length > 0));
  else if (data.real_steps_note) p.appendChild(el("p", { class: "cs-muted", "data-real-steps-note": "" }, `Your steps as they ran: not timed (${data.real_steps_note}).${measured.length ? SYNTHETIC : ""}`));
  for (const key of ["timings", "roofline", "memory"]) {
    if (!data.charts || !data.charts[key]) continue;
    const holder = el("div", { class: "cs-chart", "data-chart": key });
    holder.innerHTML = data.charts[key];
    p.appendChild(holder);
  }
  const why = !data.compiles.length ? "nothing was compiled, so nothing compiled was timed" : data.source === "live" ? "timings were turned off: --no-time, or capture(..., timings=False)" : "a log holds none; times come from a live capture: %%compile_fx, capture()";
  if (!measured.length && !data.real_steps && !data.real_steps_note) p.appendChild(el("p", { class: "cs-muted" }, `Runtimes: not measured (${why}).`));
  for (const c of measured) {
    const t = c.timing;
    p.appendChild(el("div", {}, `${c.id} forward: eager ${formatSpread(t.eager)}; compiled ${formatSpread(t.compiled)}${t.speedup ? `; ${t.speedup.toFixed(2)}x` : ""}`));
    if (t.compiled_backward) {
      p.appendChild(el("div", { "data-backward": "" }, `${c.id} backward: eager ${formatSpread(t.eager_backward)}; compiled ${formatSpread(t.compiled_backward)}${t.backward_speedup ? `; ${t.backward_speedup.toFixed(2)}x` : ""}`));
      p.appendChild(el("div", { "data-step": "" }, `${c.id} step (forward + backward): eager ${formatMs(t.eager_step)}, compiled ${formatMs(t.step)}`));
    }
    if (t.note) p.appendChild(el("div", { class: "cs-muted" }, t.note));
    if (t.gap) p.appendChild(el("div", {}, `forward: ${t.gap}`));
    if (t.backward_gap) p.appendChild(el("div", {}, `backward: ${t.backward_gap}`));
    if (t.memory) p.appendChild(el("div", { "data-memory": "" }, t.memory));
    p.appendChild(el("div", { class: "cs-muted" }, `timed: ${t.what}`));
  }
  if (!data.kernel_rows || !data.kernel_rows.length) return { dispose() {
  } };
  const { box, columns } = kernelRanking(data, data.kernel_rows, openKernel);
  p.appendChild(box);
  return { dispose: columns.dispose };
}
var RANK_COLUMNS = [
  ["rank", "#", "cs-num"],
  ["compile", "compile id", "cs-nowrap"],
  ["kernel", "kernel", "cs-kname"],
  ["per_step", "per step", "cs-num"],
  ["share", "share", "cs-num"],
  ["module", "module", "cs-wrap"],
  ["line", "line", "cs-wrap"],
  ["bandwidth", "bandwidth", "cs-rate"],
  ["flops", "FLOP/s", "cs-rate"]
];
var RANK_FOLD = [["flops", "FLOP/s"], ["compile", "compile id"], ["bandwidth", "bandwidth"], ["module", "module"]];
function kernelRanking(data, rows, openKernel) {
  const rate = (v, unit, peak) => {
    if (!v) return "";
    const [scale, prefix] = v >= 1e12 ? [1e12, "T"] : [1e9, "G"];
    return `${(v / scale).toFixed(1)} ${prefix}${unit}/s${peak ? ` (${(peak * 100).toFixed(0)}% of peak)` : ""}`;
  };
  const table = el("table", { class: "cs-table cs-rank", "data-kernel-rank": "" });
  const head = el("tr");
  for (const [key, h] of RANK_COLUMNS) head.appendChild(el("th", { "data-col": key }, h));
  table.appendChild(head);
  for (const r of rows) {
    const tr = el("tr");
    const role = r.role === "backward" ? "bw" : r.role === "forward" ? "fw" : r.role;
    const cells = [
      String(r.rank),
      `${r.compile_id} ${role}`,
      r.kernel,
      formatMs(r.per_step_s),
      r.share === null ? "" : `${(r.share * 100).toFixed(1)}%`,
      r.module,
      r.line,
      rate(r.bytes_per_s, "B", r.of_peak_bandwidth),
      rate(r.flops_per_s, "FLOP", r.of_peak_flops)
    ];
    cells.forEach((text, i) => {
      const [key, , cls] = RANK_COLUMNS[i];
      const td = el("td", { class: cls, "data-col": key }, text);
      if (key === "kernel") td.title = `${r.kernel} (${r.compile_id} ${r.role})`;
      tr.appendChild(td);
    });
    tr.title = r.code || "";
    tr.style.cursor = "pointer";
    tr.onclick = () => {
      const ci = data.compiles.findIndex((c) => c.id === r.compile_id);
      if (ci >= 0) openKernel(ci, r.kernel);
    };
    table.appendChild(tr);
  }
  const box = el("div", { "data-table": "kernel-rank" });
  box.appendChild(table);
  return { box, columns: fitColumns(box, table, RANK_FOLD) };
}

// ext/compilescope/static/result.js
var TABS = [["overview", "Overview"], ["graphs", "Graphs"], ["code", "Code"], ["guards", "Guards & shapes"], ["timings", "Timings"], ["repro", "Repro"]];
function renderHead(root, data) {
  const head = el("div", { class: "cs-head" });
  head.appendChild(el("b", {}, "compilescope"));
  let line = ` ${data.compiles.length} compile ids on ${data.device}`;
  if (data.torch) line += `, torch ${data.torch}`;
  if (data.source && data.source !== "live") line += ` \xB7 from ${data.source}`;
  head.appendChild(document.createTextNode(line));
  root.appendChild(head);
  if (data.partial) root.appendChild(el("div", { class: "cs-warn", "data-partial": "1" }, `PARTIAL: ${data.partial}; what compiled before is shown`));
  for (const s of data.skipped) root.appendChild(el("div", { class: "cs-muted" }, `skipped ${s.count}: ${s.reason}`));
  if (data.note) root.appendChild(el("div", { class: "cs-note", "data-capture-note": "" }, data.note));
}
function nothingCompiled(data) {
  return el("p", { class: "cs-empty", "data-no-compiles": "" }, data.nothing_compiled || "no compile ids in this capture.");
}
function compileChoice(data) {
  const biggest = data.compiles.reduce((best, c, i) => c.stages.length && (best < 0 || c.stages[0].nodes > data.compiles[best].stages[0].nodes) ? i : best, -1);
  let index = biggest < 0 ? 0 : biggest;
  const selectors = [];
  const choice = {
    get index() {
      return index;
    },
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
      for (const [s, cb] of selectors) {
        s.value = String(i);
        cb();
      }
    },
    // Chosen by a tab that draws it itself (the graphs tab opening another compile's graph):
    // every other tab is redrawn for it, so Code, Guards and Repro show what their selector says.
    mark(i, self) {
      index = i;
      for (const [s, cb] of selectors) {
        s.value = String(i);
        if (cb !== self) cb();
      }
    }
  };
  return choice;
}
function renderLayout(root, data, redraw) {
  const main = el("div", { class: "cs-main" });
  const cellPane = el("div", { class: "cs-cellpane" });
  const fold2 = el("button", { class: "cs-fold", title: "fold or unfold the cell listing" }, "\xAB cell");
  cellPane.appendChild(fold2);
  const setFolded = (on) => {
    cellPane.classList.toggle("cs-folded", on);
    fold2.textContent = on ? "cell \xBB" : "\xAB cell";
    redraw();
  };
  fold2.onclick = (ev) => {
    ev.stopPropagation();
    setFolded(!cellPane.classList.contains("cs-folded"));
  };
  cellPane.addEventListener("click", () => {
    if (cellPane.classList.contains("cs-folded")) setFolded(false);
  });
  const right = el("div", { class: "cs-right" });
  if (data.cells.length) main.appendChild(cellPane);
  main.appendChild(right);
  root.appendChild(main);
  return { cellPane, right, setFolded };
}
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
function foldWhenNarrow(root, data, setFolded) {
  const decideFold = (width) => {
    if (data.cells.length && width < 1100) setFolded(true);
  };
  if (root.clientWidth) decideFold(root.clientWidth);
  else if (window.ResizeObserver) {
    const watch = new ResizeObserver(() => {
      if (root.clientWidth) {
        watch.disconnect();
        decideFold(root.clientWidth);
      }
    });
    watch.observe(root);
    return () => watch.disconnect();
  }
  return () => {
  };
}
function renderResult(host, data, actions) {
  const root = el("div", { class: "cs-root" });
  host.appendChild(root);
  renderHead(root, data);
  const choice = compileChoice(data);
  let cell = null, graphs = null, code = null;
  const openGraph = (ci, graphIndex, names) => graphs.openGraph(ci, graphIndex, names);
  const openKernel = (ci, name) => code.openKernel(ci, name);
  const showLine = (file, n) => cell.showLine(file, n);
  const markLines = (locs) => cell.markLines(locs);
  const redraw = () => {
    if (graphs) graphs.redraw();
  };
  const { cellPane, right, setFolded } = renderLayout(root, data, redraw);
  const { panes, showTab } = renderTabs(right, data, redraw);
  const openCompile = (ci) => {
    choice.set(ci);
    showTab("graphs");
  };
  cell = renderCellPane(cellPane, data, { openGraph, openKernel, unfold: () => setFolded(false) });
  const overview = renderOverview(panes.overview, data, { openCompile, showLine }, actions);
  if (data.compiles.length) {
    graphs = renderGraphs(panes.graphs, data, choice, { openKernel, showLine, showTab });
    code = renderCode(panes.code, data, choice, { openGraph, markLines, showTab });
    renderGuards(panes.guards, data, choice);
    renderRepro(panes.repro, data, choice);
  } else {
    for (const key of ["graphs", "code", "guards", "repro"]) panes[key].appendChild(nothingCompiled(data));
    graphs = { openGraph: () => showTab("graphs"), redraw() {
    }, dispose() {
    } };
    code = { openKernel: () => showTab("code"), dispose() {
    } };
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

// ext/compilescope/static/entry_report.js
renderResult(document.getElementById("cs-app"), JSON.parse(document.getElementById("cs-data").textContent));
