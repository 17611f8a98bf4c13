// The result view's guards tab: the chosen compile id's symbols, its guards on symbolic shapes
// (as MathML Python built), and Dynamo's guards as text.

import { el } from "./dom.js";
import { mathCell } from "./text.js";

function symbolTable(c) {
  const t = el("table", { class: "cs-table" });
  const hr = el("tr"); for (const h of ["symbol", "source", "value", "range"]) hr.appendChild(el("th", {}, h)); t.appendChild(hr);
  for (const s of c.symbols) { const tr = el("tr"); tr.append(mathCell(s.math, s.name), el("td", {}, s.source), el("td", {}, s.value), el("td", { class: "cs-math" }, s.range)); t.appendChild(tr); }
  return t;
}

// `choice`: the chosen compile id (result.js), with a selector for this tab.
export function renderGuards(pane, data, choice) {
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
    if (c.guards) { guardBox.appendChild(el("h4", {}, "Dynamo guards")); guardBox.appendChild(el("pre", { class: "cs-pre" }, c.guards)); }
  }
}
