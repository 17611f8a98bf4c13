// The explorer's details panel: one node's name, op, target, type, module, source line and
// kernels, with links back to the cell and to the code tab (opts.onLine, opts.onKernel).
// A line of the user's cell (opts.inCell) links to the cell; a line elsewhere (a transformers
// file, torch) opens its context here: the whole path, the line's code and the nodes of this
// graph made from it, lit (`light`, explorer_interact.js's setHighlight).

import { el } from "./dom.js";

// Where a line elsewhere is: "transformers/models/gpt2/modeling_gpt2.py" from a site-packages path.
function shortFile(file) {
  const parts = String(file).split("/"), i = parts.lastIndexOf("site-packages");
  return (i >= 0 ? parts.slice(i + 1) : parts.slice(-2)).join("/");
}

function lineContext(details, s, file, line, light) {
  const { g, S } = s;
  const same = [];
  g.src.forEach((src, u) => { if (src && S(src[0]) === file && src[1] === line) same.push(u); });
  const box = el("div", { class: "cs-source-context", "data-source": `${file}:${line}` });
  box.append(el("div", { class: "cs-muted" }, "not in your cell:"), el("div", { class: "cs-source-path" }, `${file}:${line}`));
  const code = same.map((u) => S(g.src[u][2])).find(Boolean);
  if (code) box.appendChild(el("pre", { class: "cs-source-code" }, code));
  box.appendChild(el("div", {}, `${same.length} node${same.length === 1 ? "" : "s"} of this graph came from this line (lit in the drawing)`));
  details.querySelectorAll(".cs-source-context").forEach((old) => old.remove());
  details.appendChild(box);
  light(same);
}

export function showDetails(details, s, v, opts, light) {
  const { g, info, S } = s;
  details.textContent = "";
  const rows = [["name", g.names[v]], ["op", g.ops[g.op[v]]], ["target", S(g.full_target[v])],
    ["type", S(g.type[v])], ["module", S(g.mod[v])], ["note", S(g.note[v])]];
  const src = g.src[v];
  if (src) rows.push(["source", `${S(src[0])}:${src[1]}`], ["code", S(src[2])]);
  const table = el("table", { class: "cs-kv" });
  for (const [k, value] of rows) {
    if (!value) continue;
    const tr = el("tr"); tr.append(el("th", {}, k), el("td", {}, value)); table.appendChild(tr);
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
