// The result view's repro tab: each runnable repro torch logged for the chosen compile id,
// highlighted, with buttons to copy it or save it as a file.

import { el } from "./dom.js";
import { highlight } from "./text.js";

// `choice`: the chosen compile id (result.js), with a selector for this tab.
export function renderRepro(pane, data, choice) {
  const reproBox = el("div");
  pane.append(choice.select(() => renderCompile()), reproBox);
  function renderCompile() {
    const c = data.compiles[choice.index];
    reproBox.textContent = "";
    if (!c.repros.length) { reproBox.appendChild(el("p", { class: "cs-muted" }, "torch logged no runnable repro (fx_graph_runnable) for this compile id")); return; }
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
