// The findings, first on the Overview: what to change, costliest first (views/findings_view.py
// builds the rows). Each says what, where (your line; click it to see it in the cell), how often,
// what it costs, and its fix as code; a fix that is a setting can be tried in one click where a
// kernel is connected (the widget), and the before/after figures show under it.

import { el } from "./dom.js";

const SHOWN = 8; // findings open at first; the rest behind "more"

function findingItem(ctx, f, actions) {
  const item = el("li", { class: "cs-finding", "data-kind": f.kind, "data-finding": String(f.number) });
  const head = el("div", { class: "cs-finding-what" });
  head.appendChild(el("span", { class: "cs-finding-kind" }, f.kind.replace(/_/g, " ")));
  head.appendChild(el("b", {}, ` ${f.what}`));
  if (f.gb_id) head.appendChild(el("span", { class: "cs-muted" }, ` ${f.gb_id}`));
  item.appendChild(head);
  if (f.where) {
    const where = el("div", { class: "cs-finding-where" }, `where: ${f.where}`);
    const user = f.user_loc;
    if (user && ctx.showLine) {
      where.classList.add("cs-link-like");
      where.onclick = () => ctx.showLine(user[0], user[1]);
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
    button.onclick = () => { button.disabled = true; button.textContent = "running again with the fix\u2026"; actions.tryFix(f.number); };
    item.appendChild(button);
  }
  if (f.message) {
    const raw = el("details", { class: "cs-finding-raw" });
    raw.appendChild(el("summary", {}, "torch's message"));
    raw.appendChild(el("pre", { class: "cs-pre" }, f.message));
    item.appendChild(raw);
  }
  return item;
}

// A tried fix: the figures before and after, or why the second capture failed.
function renderTrial(box, trial) {
  box.textContent = "";
  if (!trial) return;
  box.setAttribute("data-trial", trial.error ? "failed" : "done");
  box.appendChild(el("b", {}, `tried: ${trial.title}`));
  box.appendChild(el("pre", { class: "cs-code" }, trial.python));
  if (trial.error) {
    box.appendChild(el("div", { class: "cs-warn" }, `the second capture failed: ${trial.error}`));
    return;
  }
  const table = el("table", { class: "cs-table cs-trial-table" });
  const head = el("tr");
  for (const h of ["", "before", "after"]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  const show = (v) => (v === null || v === undefined ? "-" : Number.isInteger(v) ? String(v) : v.toPrecision(3));
  for (const [name, a, b] of trial.rows) {
    const tr = el("tr");
    tr.append(el("td", {}, name), el("td", {}, show(a)), el("td", {}, show(b)));
    table.appendChild(tr);
  }
  box.appendChild(table);
  // The user's real steps before and after, with the model's verdict: slower or within noise
  // reads so, never as a win.
  const speedup = trial.step_speedup;
  if (speedup) box.appendChild(el("div", { class: "cs-step-speedup", "data-verdict": speedup.verdict }, `real steps: ${speedup.text}`));
}

export function renderFindings(ctx, p, actions) {
  const found = ctx.data.findings || [];
  const section = el("div", { class: "cs-findings", "data-findings": String(found.length) });
  section.appendChild(el("h4", {}, found.length ? `Findings (${found.length}), costliest first` : "Findings"));
  if (!found.length) {
    section.appendChild(el("div", { class: "cs-muted" }, "no findings: nothing broke, recompiled or stood out"));
    p.appendChild(section);
    return;
  }
  const list = el("ol", { class: "cs-finding-list" });
  for (const f of found.slice(0, SHOWN)) list.appendChild(findingItem(ctx, f, actions));
  section.appendChild(list);
  if (found.length > SHOWN) {
    const more = el("details", { class: "cs-findings-more" });
    more.appendChild(el("summary", {}, `${found.length - SHOWN} more`));
    const rest = el("ol", { class: "cs-finding-list", start: String(SHOWN + 1) });
    for (const f of found.slice(SHOWN)) rest.appendChild(findingItem(ctx, f, actions));
    more.appendChild(rest);
    section.appendChild(more);
  }
  const trialBox = el("div", { class: "cs-fix-trial" });
  section.appendChild(trialBox);
  if (actions) {
    renderTrial(trialBox, actions.trial());
    actions.onTrial((trial) => {
      renderTrial(trialBox, trial);
      for (const b of section.querySelectorAll(".cs-try-fix")) { b.disabled = false; b.textContent = "try this fix"; }
    });
  }
  p.appendChild(section);
}
