// The findings, first on the Overview: what to change, costliest first (views/findings_view.py
// builds the rows). Each says what, where (your line; click it to see it in the cell), how often,
// what it costs, and its fix as code; a fix that is a setting can be tried in one click where a
// kernel is connected (the widget), and the before/after figures show under that finding.

import { el } from "./dom.js";

const SHOWN = 8; // findings open at first; the rest behind "more"

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
    button.onclick = () => { button.disabled = true; button.textContent = "running again with the fix\u2026"; actions.tryFix(f.number); };
    item.appendChild(button);
  } else if (f.applying) {
    // The view cannot run the code again (a capturing() block, a log): the fix's settings,
    // held by compilescope.applying around the user's own run, are the way to try it.
    const box = el("div", { class: "cs-apply-fix", "data-applying": String(f.number) });
    box.appendChild(el("div", {}, "to try this fix, run your code again inside compilescope.applying (settings restored after):"));
    const code = el("pre", { class: "cs-code cs-fix-code" }, f.applying);
    const copy = el("button", { class: "cs-btn cs-copy", "data-copy": "" }, "copy");
    copy.onclick = () => {
      if (navigator.clipboard) navigator.clipboard.writeText(f.applying).then(() => { copy.textContent = "copied"; }, () => {});
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

// The first capture's compile time, to set beside the trial's baseline (a second capture).
function firstCompileS(data) {
  const times = data.compiles.map((c) => c.compile_s).filter((t) => t !== null && t !== undefined);
  return times.length ? times.reduce((a, b) => a + b, 0) : null;
}

// A tried fix: the figures before and after in human units with their change, what "before"
// is, what the fix left, or why the second capture failed.
function renderTrial(box, trial, data) {
  box.textContent = "";
  if (!trial) return;
  box.setAttribute("data-trial", trial.error ? "failed" : "done");
  // The code tried, once: a fix's title is often its code.
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
  // The user's real steps before and after, with the model's verdict: slower or within noise
  // reads so, never as a win.
  const speedup = trial.step_speedup;
  if (speedup) box.appendChild(el("div", { class: "cs-step-speedup", "data-verdict": speedup.verdict }, `real steps: ${speedup.text}`));
}

// `showLine(file, line)`: shows a line in the cell pane; `actions`: see result.js.
export function renderFindings(p, data, showLine, actions) {
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
  // A trial's result shows under the finding it came from (by number), else under the list.
  const trialBox = el("div", { class: "cs-fix-trial" });
  section.appendChild(trialBox);
  const show = (trial) => {
    for (const b of section.querySelectorAll(".cs-fix-trial")) { b.textContent = ""; b.removeAttribute("data-trial"); }
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
      for (const b of section.querySelectorAll(".cs-try-fix")) { b.disabled = false; b.textContent = "try this fix"; }
    });
  }
  p.appendChild(section);
}
