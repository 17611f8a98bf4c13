"""Layout quality and speed: compilescope's layered layout against Graphviz `dot`, side by side.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-layout [--sizes 1000 5000 20000] [--repeats 5] [--dot-timeout 300]
                                      [--dot-results dot.json]

Our layout runs `--repeats` times per size (median, min and max reported; crossings and length are
deterministic); `dot` runs once per size up to 5,000 nodes (it takes minutes). `--dot-results`
keeps dot's figures in a JSON file: read back if present for that size, written otherwise, so the
comparison can be rerun after changing our layout without waiting for dot again.

Needs `dot` (Debian package `graphviz`) for the comparison. Both layouts are scored the same way:
at each pair of adjacent layers, every edge's x where it crosses the two layers' heights (along
its drawn polyline: ours through its dummy points, dot's through its spline control points), and
the crossings counted as inversions; edge length is the polyline length in layer units.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from bisect import bisect_left, bisect_right
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "model"))
from compilescope.views.explorer.layout import _inversions, layout_graph  # noqa: E402
from test_layout_engine import fx_like  # noqa: E402


def x_at(points: list[tuple[float, float]], y: float) -> float | None:
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        lo, hi = sorted((y0, y1))
        if lo - 1e-9 <= y <= hi + 1e-9:
            return x0 if hi == lo else x0 + (x1 - x0) * (y - y0) / (y1 - y0)
    return None


def level_xs(points: list[tuple[float, float]], levels: list[float]) -> tuple[int, list[float]]:
    """The polyline's x at each level within its height range: (index of the first such level,
    xs). Same values as `x_at`; polylines whose y only grows are walked once (long edges have
    thousands of points, so calling `x_at` per level would be quadratic)."""
    ys = [p[1] for p in points]
    first = bisect_left(levels, min(ys) - 1e-9)
    end = bisect_right(levels, max(ys) + 1e-9)
    if any(b < a for a, b in zip(ys, ys[1:], strict=False)):
        return first, [x_at(points, y) for y in levels[first:end]]
    xs, j = [], 0
    for y in levels[first:end]:
        while j < len(points) - 2 and points[j + 1][1] < y - 1e-9:
            j += 1
        (x0, y0), (x1, y1) = points[j], points[j + 1]
        xs.append(x0 if y1 == y0 else x0 + (x1 - x0) * (y - y0) / (y1 - y0))
    return first, xs


def geometric_score(
    polylines: list[list[tuple[float, float]]], levels: list[float]
) -> tuple[int, float]:
    by_gap: list[list[tuple[float, float]]] = [[] for _ in levels]
    for pts in polylines:
        if len(pts) < 2:
            continue
        first, xs = level_xs(pts, levels)
        for k, (a, b) in enumerate(zip(xs, xs[1:], strict=False)):
            by_gap[first + k].append((a, b))
    crossings = 0
    for pairs in by_gap:
        pairs.sort()
        crossings += _inversions([b for _, b in pairs])
    length = sum(
        ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
        for pts in polylines
        for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False)
    )
    return crossings, length


def ours(nodes, edges, repeats=1):
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        lay = layout_graph(nodes, edges)
        times.append(time.perf_counter() - start)
    seconds = (statistics.median(times), min(times), max(times), len(times))
    levels = sorted({y for _, y in lay.positions.values()})
    return seconds, geometric_score([list(p) for _, p in lay.edges], levels)


def with_dot(nodes, edges, timeout):
    text = "digraph G {\n" + "".join(f"n{a} -> n{b};\n" for a, b in edges) + "}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".dot", delete=False) as handle:
        handle.write(text)
    start = time.perf_counter()
    try:
        out = subprocess.run(
            ["dot", "-Tplain", handle.name], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - start
    rank_heights, polylines = set(), []
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "node":
            rank_heights.add(float(parts[3]))
        elif parts and parts[0] == "edge":
            n = int(parts[3])
            pts = [(float(parts[4 + 2 * i]), float(parts[5 + 2 * i])) for i in range(n)]
            polylines.append(pts)
    # dot draws top-down with y decreasing: map heights to layer indices 0, 1, 2, ...
    heights = sorted(rank_heights, reverse=True)
    step = (heights[0] - heights[-1]) / (len(heights) - 1) if len(heights) > 1 else 1.0

    def to_layer(p):
        return (p[0] / step, (heights[0] - p[1]) / step)

    scaled = [[to_layer(p) for p in pts] for pts in polylines]
    levels = [(heights[0] - h) / step for h in heights]
    # Splines end at node borders, not centres: snap each polyline's ends to the nearest layer.
    for pts in scaled:
        pts[0] = (pts[0][0], levels[min(bisect_left(levels, pts[0][1]), len(levels) - 1)])
        pts[-1] = (pts[-1][0], levels[min(bisect_left(levels, pts[-1][1] - 0.5), len(levels) - 1)])
    return seconds, geometric_score(scaled, levels)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000, 20000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dot-timeout", type=float, default=300)
    parser.add_argument("--dot-results", type=Path, default=None)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    found: list[tuple] = []
    saved = (
        json.loads(args.dot_results.read_text())
        if args.dot_results and args.dot_results.exists()
        else {}
    )
    print(
        f"## Layout ({time.strftime('%Y-%m-%d')}, {platform.machine()}, Python {platform.python_version()})\n"
    )
    print(
        "| nodes | edges | ours: time (median, min-max, n) | ours: crossings | ours: edge length | dot: time | dot: crossings | dot: edge length | crossings ratio | time ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        nodes, edges = fx_like(size, seed=size)
        (t_ours, t_min, t_max, n), (c_ours, l_ours) = ours(nodes, edges, args.repeats)
        ours_time = f"{t_ours:.2f} s ({t_min:.2f}-{t_max:.2f}, n={n})"
        case = f"{size} nodes, {len(edges)} edges"
        found += [(case, "ours: time", "s", {"median": t_ours, "low": t_min, "high": t_max, "n": n}),
                  (case, "ours: crossings", "", [c_ours])]  # fmt: skip
        dot = None
        if str(size) in saved:
            dot = saved[str(size)]
        elif shutil.which("dot") and size <= 5000:
            dot = with_dot(nodes, edges, args.dot_timeout)
            if dot is not None and args.dot_results:
                saved[str(size)] = dot
                args.dot_results.write_text(json.dumps(saved))
        if dot is None:
            why = "not run (over 5,000 nodes)" if size > 5000 else "timed out"
            print(
                f"| {size} | {len(edges)} | {ours_time} | {c_ours} | {l_ours:.0f} | {why} | | | | |"
            )
            continue
        t_dot, (c_dot, l_dot) = dot
        ratio = c_ours / c_dot if c_dot else float("inf")
        found += [(case, "dot: time", "s", [t_dot]), (case, "dot: crossings", "", [c_dot])]
        print(
            f"| {size} | {len(edges)} | {ours_time} | {c_ours} | {l_ours:.0f} | {t_dot:.1f} s | {c_dot} | "
            f"{l_dot:.0f} | {ratio:.2f} | 1/{t_dot / t_ours:.0f} |",
            flush=True,
        )
    if args.json:
        import rows

        rows.save_figures(args.json, found)


SUITE = {
    "name": "cpu-layout",
    "device": "CPU",
    "measures": "the explorer's layered layout of FX-like graphs (1,000 to 20,000 nodes): time "
    "and edge crossings, against Graphviz dot's where dot finishes",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    return rows.convert_figures(SUITE["name"], path, prov, args)


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    return rows.run_figures(Path(__file__), SUITE["name"], args, out)


RECORDED = [("raw/layout/layout_2026-11-27.json", {}, "--sizes 1000 5000 20000 --repeats 5")]


if __name__ == "__main__":
    main()
