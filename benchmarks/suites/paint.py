"""First paint of the explorer in headless Chromium: 50, 5,000 and 20,000-node FX-like graphs.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-paint [--sizes 50 5000 20000] [--repeats 5]

For each size: the payload built in Python (time, bytes per node), then a page with the explorer
loaded from disk: time from navigation start to the first drawn frame, and the time for the
"expand all" click to draw every node (the worst case a user can ask for). Median and spread.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "model"))
from compilescope.model.graph import Graph, Node, TensorMeta  # noqa: E402
from compilescope.views.explorer.data import explorer_payload  # noqa: E402
from compilescope.views.widget import static_text  # noqa: E402
from test_layout_engine import fx_like  # noqa: E402

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip


def synthetic_graph(n: int) -> Graph:
    """An FX-like graph with a module tree like a transformer's: layers of blocks."""
    names, edges = fx_like(n, seed=n)
    inputs: dict[int, list[int]] = {}
    for a, b in edges:
        inputs.setdefault(b, []).append(a)
    meta = TensorMeta.parse_all("f32[8, 64][64, 1]cpu")
    nodes = [
        Node(
            name=f"node_{i}",
            op="call_function" if i in inputs else "placeholder",
            target="torch.ops.aten.add.Tensor",
            inputs=tuple(f"node_{j}" for j in inputs.get(i, ())),
            tensors=meta,
            type_text="f32[8, 64][64, 1]cpu",
            module_path=f"layers.{i // 250}.block{(i // 50) % 5}" if i in inputs else None,
        )
        for i in names
    ]
    return Graph("synthetic", "", nodes)


def page_html(payload: dict) -> str:
    """The explorer widget's own bundle (static/dist/explorer.js), rendered as anywidget would:
    imported as a module (from a blob: a file:// page cannot import a file) with a model that
    holds the payload."""
    data = json.dumps(payload, separators=(",", ":")).replace("<", "\\u003c")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{static_text('compilescope.css')}"
        "</style></head><body><div id='app'></div>"
        f"<script type='application/json' id='d'>{data}</script>"
        f"<script type='text/plain' id='esm'>{static_text('dist/explorer.js')}</script>"
        "<script type='module'>"
        "const code = document.getElementById('esm').textContent;"
        "const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));"
        "const widget = (await import(url)).default;"
        "const data = document.getElementById('d').textContent;"
        "widget.render({ model: { get: () => data, on: () => {} }, el: document.getElementById('app') });"
        "requestAnimationFrame(() => requestAnimationFrame(() => { window.firstPaint = performance.now(); }));"
        "</script></body></html>"
    )


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[50, 5000, 20000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    found: list[tuple] = []
    print(f"## Explorer first paint ({time.strftime('%Y-%m-%d')}, {platform.machine()}, "
          f"Python {platform.python_version()}, headless Debian Chromium)\n")  # fmt: skip
    print("| nodes | payload build | bytes/node | first paint | expand all, drawn |")
    print("|---|---|---|---|---|")
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for size in args.sizes:
            graph = synthetic_graph(size)
            builds = []
            for _ in range(3):
                start = time.perf_counter()
                payload = explorer_payload(graph)
                builds.append(time.perf_counter() - start)
            per_node = len(json.dumps(payload, separators=(",", ":"))) / size
            path = Path(tmp) / f"g{size}.html"
            path.write_text(page_html(payload), encoding="utf-8")
            paints, expands = [], []
            for _ in range(args.repeats):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"file://{path}")
                page.wait_for_function("window.firstPaint !== undefined", timeout=60_000)
                paints.append(page.evaluate("window.firstPaint") / 1000)
                expands.append(page.evaluate(
                    "() => new Promise(done => { const t = performance.now();"
                    " document.querySelector(\"[data-action='expand']\").click();"
                    " requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t))); })"
                ) / 1000)  # fmt: skip
                page.close()
            print(
                f"| {size} | {spread(builds)} | {per_node:.0f} | {spread(paints)} | {spread(expands)} |"
            )
            found += [(f"{size} nodes", "payload build", "s", builds),
                      (f"{size} nodes", "payload", "bytes/node", [per_node]),
                      (f"{size} nodes", "first paint", "s", paints),
                      (f"{size} nodes", "expand all, drawn", "s", expands)]  # fmt: skip
        browser.close()
    if args.json:
        import rows

        rows.save_figures(args.json, found)


SUITE = {
    "name": "cpu-paint",
    "device": "CPU + Chromium",
    "measures": "the explorer's first paint and 'expand all' in headless Chromium, and the "
    "payload's build time and size, on FX-like graphs of 50 to 20,000 nodes",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    return rows.convert_figures(SUITE["name"], path, prov, args)


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    return rows.run_figures(Path(__file__), SUITE["name"], args, out)


RECORDED = [("raw/paint/paint_2026-11-27.json", {}, "--repeats 3")]


if __name__ == "__main__":
    main()
