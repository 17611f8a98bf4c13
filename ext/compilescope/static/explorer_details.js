// The explorer's details panel: one node's name, op, target, type, module, source line and
// kernels, with links back to the cell and to the code tab (opts.onLine, opts.onKernel).

import { el } from "./dom.js";

export function showDetails(details, s, v, opts) {
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
  if (src && opts.onLine) {
    const a = el("button", { class: "cs-link", "data-link": "line" }, `show line ${src[1]} in the cell`);
    a.onclick = () => opts.onLine(S(src[0]), src[1]);
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
