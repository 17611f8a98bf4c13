// The result view: overview, every stage's graph, kernels, cell, guards, timings, repros, diff.
// Cross-links: cell line <-> graph nodes <-> kernels <-> saved tensors. Text goes in through
// textContent only; innerHTML only for markup Python built with every string escaped: matplotlib's
// SVG charts and sympy's MathML.

function csRenderResult(el, data) {
  const root = csEl("div", { class: "cs-root" });
  el.appendChild(root);
  const cellOf = {};
  for (const cell of data.cells) cellOf[cell.file] = cell.cell;
  const head = csEl("div", { class: "cs-head" });
  head.appendChild(csEl("b", {}, "compilescope"));
  let line = ` ${data.compiles.length} compile ids on ${data.device}`;
  if (data.torch) line += `, torch ${data.torch}`;
  if (data.source && data.source !== "live") line += ` \u00b7 from ${data.source}`;
  head.appendChild(document.createTextNode(line));
  root.appendChild(head);
  if (data.partial) root.appendChild(csEl("div", { class: "cs-warn", "data-partial": "1" }, `PARTIAL: ${data.partial}; what compiled before is shown`));
  for (const s of data.skipped) root.appendChild(csEl("div", { class: "cs-muted" }, `skipped ${s.count}: ${s.reason}`));

  const main = csEl("div", { class: "cs-main" });
  const cellPane = csEl("div", { class: "cs-cellpane" });
  const fold = csEl("button", { class: "cs-fold", title: "fold or unfold the cell listing" }, "\u00ab cell");
  cellPane.appendChild(fold);
  const setFolded = (on) => {
    cellPane.classList.toggle("cs-folded", on);
    fold.textContent = on ? "cell \u00bb" : "\u00ab cell";
    if (activeExplorer) activeExplorer.redraw();
  };
  fold.onclick = (ev) => { ev.stopPropagation(); setFolded(!cellPane.classList.contains("cs-folded")); };
  cellPane.addEventListener("click", () => { if (cellPane.classList.contains("cs-folded")) setFolded(false); });
  const right = csEl("div", { class: "cs-right" });
  if (data.cells.length) main.appendChild(cellPane);
  main.appendChild(right);
  root.appendChild(main);

  // --- tabs ---------------------------------------------------------------------------------
  const tabBar = csEl("div", { class: "cs-tabs", role: "tablist" });
  const panes = {};
  const tabNames = [["overview", "Overview"], ["graphs", "Graphs"], ["code", "Code"], ["guards", "Guards & shapes"], ["timings", "Timings"], ["repro", "Repro"]];
  if (data.diff) tabNames.push(["diff", "Diff"]);
  for (const [key, label] of tabNames) {
    const b = csEl("button", { class: "cs-tab", "data-tab": key, role: "tab" }, label);
    b.onclick = () => showTab(key);
    tabBar.appendChild(b);
    panes[key] = csEl("div", { class: "cs-pane", "data-pane": key });
  }
  right.appendChild(tabBar);
  for (const p of Object.values(panes)) right.appendChild(p);
  let current = "overview";
  function showTab(key) {
    current = key;
    for (const [k, p] of Object.entries(panes)) p.style.display = k === key ? "" : "none";
    for (const b of tabBar.children) b.classList.toggle("cs-on", b.getAttribute("data-tab") === key);
    if (key === "graphs" && activeExplorer) activeExplorer.redraw();
  }

  // --- compile selector shared by graphs, code, guards and repro ------------------------------
  // Start on the biggest compile: restarts and empty compile ids have nothing to draw.
  let compileIndex = data.compiles.reduce((best, c, i) => (c.stages.length && (best < 0 || c.stages[0].nodes > data.compiles[best].stages[0].nodes) ? i : best), -1);
  if (compileIndex < 0) compileIndex = 0;
  const selectors = [];
  function compileSelect(onChange) {
    const s = csEl("select", { class: "cs-select" });
    data.compiles.forEach((c, i) => s.appendChild(csEl("option", { value: String(i) }, `${c.id} ${c.frame.label || c.frame.function || ""}`)));
    s.onchange = () => setCompile(Number(s.value));
    selectors.push([s, onChange]);
    return s;
  }
  function setCompile(i) {
    compileIndex = i;
    for (const [s, cb] of selectors) { s.value = String(i); cb(); }
  }

  // --- cell pane and line marks ---------------------------------------------------------------
  const lineEls = new Map(); // "file:line" -> element
  const linkBox = csEl("div", { class: "cs-links" });
  for (const cell of data.cells) {
    const box = csEl("div", { class: "cs-cell" });
    box.appendChild(csEl("div", { class: "cs-muted" }, cell.cell !== null ? `cell [${cell.cell}]` : cell.file));
    cell.text.split("\n").forEach((text, i) => {
      const n = i + 1;
      const row = csEl("div", { class: "cs-line", "data-line": String(n) });
      row.append(csEl("span", { class: "cs-ln" }, String(n)), csEl("span", {}, text || " "));
      row.onclick = () => showLine(cell.file, n);
      lineEls.set(`${cell.file}:${n}`, row);
      box.appendChild(row);
    });
    cellPane.appendChild(box);
  }
  cellPane.appendChild(linkBox);
  // What each line became, in every compile: nodes per stage, kernels, graph breaks.
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
    linkBox.textContent = "";
    const e = byLine.get(`${file}:${n}`);
    linkBox.appendChild(csEl("div", { class: "cs-muted" }, `line ${n}`));
    if (!e) { linkBox.appendChild(csEl("div", {}, "nothing compiled came from this line")); return; }
    for (const [ci, b] of e.breaks) linkBox.appendChild(csEl("div", { class: "cs-warn" }, `graph break (${data.compiles[ci].id}): ${b.reason}`));
    for (const [ci, st, names] of e.nodes) {
      const a = csEl("button", { class: "cs-link", "data-link": "nodes" }, `${data.compiles[ci].id} ${st.label}: ${names.length} node${names.length > 1 ? "s" : ""}`);
      a.title = names.join(", ");
      a.onclick = () => openGraph(ci, st.graph, names);
      linkBox.appendChild(a);
    }
    for (const [ci, k] of e.kernels) {
      const a = csEl("button", { class: "cs-link", "data-link": "kernel" }, `${data.compiles[ci].id} kernel ${k.name}`);
      a.onclick = () => openKernel(ci, k.name);
      linkBox.appendChild(a);
    }
  }

  // --- overview ---------------------------------------------------------------------------------
  {
    const p = panes.overview;
    // Several ranks of a job first: which agree, and where each group parts from the others.
    if (data.ranks_html) {
      const holder = csEl("div", { class: "cs-rank-report" });
      holder.innerHTML = data.ranks_html; // built and escaped in Python (views/ranks_html.py)
      p.appendChild(holder);
    }
    const table = csEl("table", { class: "cs-table" });
    const hr = csEl("tr");
    for (const h of ["compile id", "frame", "ops per stage", "kernels", "activations for bwd", "compile time", "status"]) hr.appendChild(csEl("th", {}, h));
    table.appendChild(hr);
    data.compiles.forEach((c, ci) => {
      const tr = csEl("tr");
      const idButton = csEl("button", { class: "cs-link" }, c.id);
      idButton.onclick = () => { setCompile(ci); showTab("graphs"); };
      const td = csEl("td"); td.appendChild(idButton); tr.appendChild(td);
      const f = c.frame;
      tr.appendChild(csEl("td", {}, f.cell !== null ? `cell [${f.cell}]` : f.label || ""));
      tr.appendChild(csEl("td", {}, c.stages.filter((s) => s.kind !== "partition").map((s) => `${s.label} ${s.ops}`).join(", ")));
      tr.appendChild(csEl("td", {}, c.kernels.length || ""));
      tr.appendChild(csEl("td", {}, c.partition ? `${c.activation_text} (${c.saved_text} saved)` : ""));
      tr.appendChild(csEl("td", {}, c.compile_s !== null ? `${c.compile_s.toFixed(2)} s` : ""));
      tr.appendChild(csEl("td", {}, c.status));
      table.appendChild(tr);
    });
    p.appendChild(table);
    data.compiles.forEach((c) => {
      for (const b of c.breaks) {
        const where = b.loc ? (b.cell !== null ? ` at cell [${b.cell}] line ${b.loc[1]}` : ` at ${b.loc[0]}:${b.loc[1]}`) : "";
        const div = csEl("div", { class: "cs-break" });
        div.appendChild(csEl("div", { class: "cs-warn" }, `graph break in ${c.id}${where}`));
        div.appendChild(csEl("pre", { class: "cs-pre" }, b.reason));
        if (b.loc) div.onclick = () => showLine(b.loc[0], b.loc[1]);
        p.appendChild(div);
      }
      for (const r of c.recompiles) p.appendChild(csEl("div", {}, `${c.id} recompiled: ${r}`));
      if (c.failure) p.appendChild(csEl("pre", { class: "cs-pre cs-warn" }, `${c.id} failed: ${c.failure}`));
    });
    // What torch said during the cell, once, by compile id (not as stderr under the view).
    if (data.messages && data.messages.length) p.appendChild(csSaid(data, (ci) => { setCompile(ci); showTab("graphs"); }));
    if (data.charts && data.charts.stages) {
      const holder = csEl("div", { class: "cs-chart", "data-chart": "stages" });
      holder.innerHTML = data.charts.stages; // matplotlib's SVG, text escaped (views/figures.py)
      p.appendChild(holder);
    }
  }

  // --- graphs -----------------------------------------------------------------------------------
  const explorers = new Map();
  let activeExplorer = null;
  const graphPane = panes.graphs;
  const stageBar = csEl("div", { class: "cs-stagebar" });
  const graphArea = csEl("div", { class: "cs-grapharea" });
  const savedBox = csEl("div", { class: "cs-saved" });
  const textBox = csEl("details", { class: "cs-text" });
  textBox.style.display = "none";
  graphPane.append(compileSelect(() => renderStages()), stageBar, savedBox, graphArea, textBox);
  let stageIndex = 0;
  function renderStages() {
    const c = data.compiles[compileIndex];
    stageBar.textContent = "";
    c.stages.forEach((st, si) => {
      const b = csEl("button", { class: "cs-btn cs-stage", "data-stage": st.kind, "data-graph": String(st.graph) }, `${st.label} (${st.nodes})`);
      b.onclick = () => openGraph(compileIndex, st.graph);
      stageBar.appendChild(b);
    });
    if (!c.stages.length) stageBar.appendChild(csEl("span", { class: "cs-muted" }, "no graphs were logged for this compile id"));
    else openGraph(compileIndex, c.stages[Math.min(stageIndex, c.stages.length - 1)].graph, null, true);
  }
  function openGraph(ci, graphIndex, names, quiet) {
    if (ci !== compileIndex) { compileIndex = ci; for (const [s] of selectors) s.value = String(ci); renderStages(); }
    const c = data.compiles[ci];
    const st = c.stages.find((s) => s.graph === graphIndex);
    stageIndex = c.stages.indexOf(st);
    for (const b of stageBar.children) b.classList.toggle("cs-on", b.getAttribute("data-graph") === String(st.graph));
    for (const ex of explorers.values()) ex.root.style.display = "none";
    let ex = explorers.get(graphIndex);
    if (!ex) {
      const holder = csEl("div", {});
      graphArea.appendChild(holder);
      ex = csCreateExplorer(holder, data.graphs[graphIndex], {
        onKernel: (name) => openKernel(ci, name),
        onLine: (file, ln) => showLine(file, ln),
      });
      explorers.set(graphIndex, ex);
    }
    ex.root.style.display = "";
    activeExplorer = ex;
    textBox.textContent = "";
    textBox.style.display = st.text ? "" : "none";
    if (st.text) { textBox.appendChild(csEl("summary", {}, "graph as torch printed it")); textBox.appendChild(csHighlight(st.text)); }
    renderSaved(c, st);
    if (!quiet) showTab("graphs");
    ex.redraw();
    if (names) ex.highlightNames(names);
  }
  function renderSaved(c, st) {
    savedBox.textContent = "";
    if (!c.partition || !["aot_forward_graph", "aot_backward_graph", "partition"].includes(st.kind)) return;
    csRenderPartition(savedBox, c, (s) => {
      const part = c.stages.find((x) => x.kind === "partition");
      if (part) openGraph(compileIndex, part.graph, [`fw.${s.name}`, ...s.users.map((u) => `bw.${u}`)]);
      else if (activeExplorer) activeExplorer.highlightNames([s.name, ...s.users]);
    });
  }

  // --- code -------------------------------------------------------------------------------------
  const codePane = panes.code;
  codePane.classList.add("cs-codepane");
  const kernelList = csEl("div", { class: "cs-kernels" });
  const kernelShow = csEl("div", { class: "cs-kernel" });
  codePane.append(compileSelect(() => renderKernels()), kernelList, kernelShow);
  function renderKernels() {
    const c = data.compiles[compileIndex];
    kernelList.textContent = ""; kernelShow.textContent = "";
    if (!c.kernels.length) { kernelList.appendChild(csEl("p", { class: "cs-muted" }, "no generated code for this compile id (backend without Inductor, or nothing to compile)")); return; }
    const table = csEl("table", { class: "cs-table" });
    const hr = csEl("tr");
    const timed = c.kernels.some((k) => k.time); // no empty column when nothing was timed
    for (const h of ["kernel", "kind", "calls", ...(timed ? ["median per call"] : []), "nodes", "lines"]) hr.appendChild(csEl("th", {}, h));
    table.appendChild(hr);
    for (const k of c.kernels) {
      const tr = csEl("tr", { class: "cs-kernel-row", "data-kernel": k.name });
      tr.append(csEl("td", { class: "cs-kname", title: k.name }, k.name), csEl("td", { title: "language, graph" }, `${k.lang} ${k.role === "backward" ? "bw" : k.role === "forward" ? "fw" : k.role}`), csEl("td", {}, k.calls),
        ...(timed ? [csEl("td", { title: k.time ? csSpread(k.time) : "" }, k.time ? csMs(k.time.median) : "")] : []),
        csEl("td", { title: "post-grad nodes it computes" }, k.fused.length), csEl("td", {}, csLines(k.lines, cellOf)));
      tr.onclick = () => showKernel(c, k);
      table.appendChild(tr);
    }
    kernelList.appendChild(table);
    showKernel(c, c.kernels.find((k) => k.lang !== "extern") || c.kernels[0], true);
    for (const o of c.output_code) {
      const d = csEl("details", { class: "cs-text" });
      d.appendChild(csEl("summary", {}, `whole output code (${o.role || o.aot_id || "module"})`));
      d.appendChild(csHighlight(o.text));
      kernelList.appendChild(d);
    }
  }
  function showKernel(c, k, quiet) {
    kernelShow.textContent = "";
    for (const row of kernelList.querySelectorAll(".cs-kernel-row")) row.classList.toggle("cs-on", row.getAttribute("data-kernel") === k.name);
    kernelShow.appendChild(csEl("h4", { title: k.name }, `${k.lang} kernel ${k.name}`));
    if (k.time) kernelShow.appendChild(csEl("div", {}, `time per call: ${csSpread(k.time)}, ${k.calls_per_run} calls per run`));
    if (k.bandwidth) kernelShow.appendChild(csEl("div", {}, `achieved bandwidth: ${(k.bandwidth / 1e9).toFixed(1)} GB/s (Inductor's estimate of ${(k.bytes / 1e6).toFixed(3)} MB moved per call, over the median)`));
    const lines = k.lines.filter(Boolean);
    if (!quiet) markLines(lines); // a click marks the kernel's lines; the first pick does not
    kernelShow.setAttribute("data-lines", String(lines.length));
    if (k.fused.length && k.post_graph !== null && k.post_graph !== undefined) {
      const b = csEl("button", { class: "cs-link", "data-link": "fused" }, `show its ${k.fused.length} post-grad nodes in the graph`);
      b.onclick = () => openGraph(compileIndex, k.post_graph, k.fused);
      kernelShow.appendChild(b);
      kernelShow.appendChild(csEl("div", { class: "cs-muted" }, `fuses: ${k.fused.join(", ")}`));
    } else {
      kernelShow.appendChild(csEl("div", { class: "cs-muted" }, "no provenance recorded for this kernel"));
    }
    if (lines.length) kernelShow.appendChild(csEl("div", { class: "cs-muted" }, `from lines: ${lines.map((l) => csWhere(l, cellOf)).join(", ")}`));
    if (k.aten.length) kernelShow.appendChild(csEl("div", { class: "cs-muted" }, `ATen ops: ${k.aten.join(", ")}`));
    const launch = Object.entries(k.launch || {}).filter(([a]) => a !== "autotune_us");
    const took = (k.launch || {}).autotune_us;
    const tuning = took ? ` (chosen by autotuning: compiling and timing the candidates took ${(took / 1e3).toFixed(1)} ms)` : "";
    if (launch.length) kernelShow.appendChild(csEl("div", { "data-launch": "" }, `launch: ${launch.map(([a, b]) => `${a}=${b}`).join(", ")}${tuning}`));
    if (k.grid.length) kernelShow.appendChild(csEl("div", { "data-grid": "" }, `launched with grid (${k.grid.join(", ")}), block (${k.block.join(", ")})` + (k.registers ? `, ${k.registers} registers per thread` : "") + " (profiler)"));
    kernelShow.appendChild(csHighlight(k.source || "(an extern call: no generated source)"));
    for (const [stage, text] of Object.entries(k.ir || {})) {
      const d = csEl("details", { class: "cs-text", "data-ir": stage });
      d.appendChild(csEl("summary", {}, `Triton IR: ${stage.toUpperCase()} (${text.split("\n").length} lines, from Triton's cache)`));
      d.appendChild(csEl("pre", {}, text));
      kernelShow.appendChild(d);
    }
    if (k.lang === "triton" && !Object.keys(k.ir || {}).length) kernelShow.appendChild(csEl("div", { class: "cs-muted" }, "Triton IR: not found in Triton's cache (a log read offline, or a cache hit from another process)"));
  }
  function openKernel(ci, name) {
    setCompile(ci);
    showTab("code");
    const k = data.compiles[ci].kernels.find((x) => x.name === name);
    if (k) showKernel(data.compiles[ci], k);
  }

  // --- guards and shapes --------------------------------------------------------------------------
  const guardBox = csEl("div");
  panes.guards.append(compileSelect(() => renderGuards()), guardBox);
  function renderGuards() {
    const c = data.compiles[compileIndex];
    guardBox.textContent = "";
    if (c.symbols.length) {
      guardBox.appendChild(csEl("h4", {}, "symbols"));
      const t = csEl("table", { class: "cs-table" });
      const hr = csEl("tr"); for (const h of ["symbol", "source", "value", "range"]) hr.appendChild(csEl("th", {}, h)); t.appendChild(hr);
      for (const s of c.symbols) { const tr = csEl("tr"); tr.append(csMath(s.math, s.name), csEl("td", {}, s.source), csEl("td", {}, s.value), csEl("td", { class: "cs-math" }, s.range)); t.appendChild(tr); }
      guardBox.appendChild(t);
    }
    if (c.shape_guards.length) {
      guardBox.appendChild(csEl("h4", {}, "guards on symbolic shapes"));
      for (const gd of c.shape_guards) {
        const d = csMath(gd.math, gd.expr, "div");
        d.title = gd.expr;
        if (gd.loc) d.appendChild(csEl("span", { class: "cs-muted" }, `  ${gd.loc[0].split("/").pop()}:${gd.loc[1]}`));
        guardBox.appendChild(d);
      }
    }
    if (!c.symbols.length && !c.shape_guards.length) guardBox.appendChild(csEl("p", { class: "cs-muted" }, "static shapes: no symbols (use --dynamic to see symbolic shapes)"));
    if (c.guards) { guardBox.appendChild(csEl("h4", {}, "Dynamo guards")); guardBox.appendChild(csEl("pre", { class: "cs-pre" }, c.guards)); }
  }

  // --- timings (static/timings.js) ----------------------------------------------------------------
  csRenderTimings(panes.timings, data, openKernel);

  // --- repro ----------------------------------------------------------------------------------------
  const reproBox = csEl("div");
  panes.repro.append(compileSelect(() => renderRepro()), reproBox);
  function renderRepro() {
    const c = data.compiles[compileIndex];
    reproBox.textContent = "";
    if (!c.repros.length) { reproBox.appendChild(csEl("p", { class: "cs-muted" }, "torch logged no runnable repro (fx_graph_runnable) for this compile id")); return; }
    c.repros.forEach((script, i) => {
      const name = `repro_${c.id.replace(/[^0-9A-Za-z]+/g, "_")}_${i}.py`;
      const copy = csEl("button", { class: "cs-btn" }, `copy ${name}`);
      copy.onclick = () => navigator.clipboard && navigator.clipboard.writeText(script);
      const save = csEl("a", { class: "cs-btn", download: name }, "save");
      save.href = URL.createObjectURL(new Blob([script], { type: "text/x-python" }));
      reproBox.append(copy, save, csHighlight(script));
    });
  }

  if (data.diff) csRenderDiff(panes.diff, data.diff);

  for (const [s, cb] of selectors) { s.value = String(compileIndex); cb(); }
  showTab("overview");
  // Narrow outputs start with the listing folded, so the graph keeps a useful width; decided
  // once, when the output first has a width (a widget is drawn before it is on the page).
  const decideFold = (width) => { if (data.cells.length && width < 1100) setFolded(true); };
  if (root.clientWidth) decideFold(root.clientWidth);
  else if (window.ResizeObserver) {
    const watch = new ResizeObserver(() => { if (root.clientWidth) { watch.disconnect(); decideFold(root.clientWidth); } });
    watch.observe(root);
  }
  root.setAttribute("data-ready", "1");
  return { showTab, openKernel, showLine, openGraph };
}
