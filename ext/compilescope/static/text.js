// Text helpers of the result view: code highlighting, byte sizes, times, source locations.
// Every string becomes a text node (csEl / createTextNode), never HTML.

function csHighlight(source) {
  // A small tokenizer for Python (Triton, wrappers) and C++: comments, strings, numbers, keywords.
  const pre = csEl("pre", { class: "cs-code" });
  const re = /(#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(\b\d+(?:\.\d+)?(?:e[-+]?\d+)?f?\b)|(\b(?:def|return|if|else|elif|for|while|in|import|from|as|with|class|None|True|False|and|or|not|lambda|yield|pass|auto|const|int|float|double|long|void|bool|extern|static|inline|template|typename|struct|using|namespace|include|pragma|omp|tl|triton|jit)\b)/g;
  let last = 0, m;
  const add = (text, cls) => {
    if (!text) return;
    if (cls) pre.appendChild(csEl("span", { class: cls }, text));
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

function csBytes(n) {
  if (n === null || n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// "cell [3] line 2" for a notebook cell's file (its name changes every run), else "file.py:12".
function csWhere(loc, cellOf) {
  const n = cellOf ? cellOf[loc[0]] : undefined;
  if (n !== undefined && n !== null) return `cell [${n}] line ${loc[1]}`;
  return `${String(loc[0]).split("/").pop()}:${loc[1]}`;
}

function csLines(locs, cellOf) {
  const shown = locs.filter(Boolean).slice(0, 4).map((l) => csWhere(l, cellOf));
  return shown.join(", ") + (locs.length > 4 ? ` +${locs.length - 4}` : "");
}

function csMs(s) { return s === null || s === undefined ? "" : `${(s * 1e3).toFixed(3)} ms`; }
function csSpread(t) { return t ? `${csMs(t.median)} (min ${csMs(t.min)}, max ${csMs(t.max)}, n=${t.n})` : "not measured"; }

// A guard or symbol as MathML that Python built (views/math.py: sympy's printer, whitelisted
// elements, every text escaped), so the markup is ours, not the log's; the text is the title.
function csMath(markup, text, tag) {
  const box = csEl(tag || "td", { class: "cs-math", "data-math": "" });
  if (markup) box.innerHTML = markup; else box.textContent = text;
  return box;
}

// torch's warnings of the cell, each once, with a link to the compile id it was said in.
function csSaid(data, openCompile) {
  const n = data.messages.length;
  const said = csEl("details", { class: "cs-said", "data-said": String(n) });
  said.open = true;
  said.appendChild(csEl("summary", {}, `torch said (${n} warning${n > 1 ? "s" : ""})`));
  for (const m of data.messages) {
    const row = csEl("div", { class: "cs-said-item" });
    const ci = data.compiles.findIndex((c) => c.id === m.compile_id);
    if (ci >= 0) {
      const link = csEl("button", { class: "cs-link", "data-link": "compile" }, m.compile_id);
      link.style.display = "inline";
      link.onclick = () => openCompile(ci);
      row.appendChild(link);
    } else if (m.compile_id) row.appendChild(csEl("span", {}, `[${m.compile_id}] `));
    row.appendChild(csEl("span", { class: "cs-muted" }, ` ${m.origin} ${m.where}${m.count > 1 ? ` (${m.count} times)` : ""}`));
    row.appendChild(csEl("pre", {}, m.text));
    said.appendChild(row);
  }
  return said;
}
