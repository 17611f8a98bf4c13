// Tables that fit their pane: cells marked with data-col fold away, lowest priority first, until
// the table is no wider than its box; a button over the table brings them back (the box then
// scrolls sideways). Refitted whenever the box changes width (a folded cell strip, a tab shown),
// until `dispose` stops watching it.

import { el } from "./dom.js";

// `box` holds `table`; `order`: [key, label] of the columns that may fold, lowest priority first.
export function fitColumns(box, table, order) {
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
  more.onclick = () => { shown = !shown; fit(); };
  const refit = () => {
    if (!box.clientWidth || box.clientWidth === width) return; // hidden, or no new width
    width = box.clientWidth;
    fit();
  };
  const sizes = window.ResizeObserver ? new ResizeObserver(refit) : null;
  if (sizes) sizes.observe(box);
  requestAnimationFrame(refit);
  return { refit: () => { width = -1; refit(); }, dispose: () => { if (sizes) sizes.disconnect(); } };
}
