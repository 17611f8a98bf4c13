// Figures and places as text: byte sizes, times, source locations.

export function formatBytes(n) {
  if (n === null || n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// A notebook cell, "cell [3]", or a line of it, "cell [3] line 2": the one place the view writes
// it (the payload gives each cell's number; model/place.py's cell_label writes the same text).
export function formatCell(n, line) {
  return line === undefined ? `cell [${n}]` : `cell [${n}] line ${line}`;
}

// "cell [3] line 2" for a notebook cell's file (its name changes every run), else "file.py:12".
export function formatLocation(loc, cellOf) {
  const n = cellOf ? cellOf[loc[0]] : undefined;
  if (n !== undefined && n !== null) return formatCell(n, loc[1]);
  return `${String(loc[0]).split("/").pop()}:${loc[1]}`;
}

// The payload's cells as formatLocation's `cellOf`: file -> the cell's number.
export function cellNumbers(data) {
  const cellOf = {};
  for (const cell of data.cells) cellOf[cell.file] = cell.cell;
  return cellOf;
}

export function formatMs(s) { return s === null || s === undefined ? "" : `${(s * 1e3).toFixed(3)} ms`; }

export function formatSpread(t) {
  return t ? `${formatMs(t.median)} (min ${formatMs(t.min)}, max ${formatMs(t.max)}, n=${t.n})` : "not measured";
}
