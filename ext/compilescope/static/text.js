// Text shown as code or math: a small highlighter for Python and C++, and MathML cells.
// Every string from a capture becomes a text node (el / createTextNode), never HTML.

import { el } from "./dom.js";

export function highlight(source) {
  // A small tokenizer for Python (Triton, wrappers) and C++: comments, strings, numbers, keywords.
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

// A guard or symbol as MathML that Python built (views/math.py: sympy's printer, whitelisted
// elements, every text escaped), so the markup is ours, not the log's; the text is the title.
export function mathCell(markup, text, tag) {
  const box = el(tag || "td", { class: "cs-math", "data-math": "" });
  if (markup) box.innerHTML = markup; else box.textContent = text;
  return box;
}
