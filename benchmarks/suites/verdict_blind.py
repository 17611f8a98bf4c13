"""The verdict "compiled not faster", judged blind on a CPU: 7 loops written from public reports.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-verdict-blind [--pairs 3]

Two steps, the loops' own scripts (benchmarks/data/blind_verdict/, sources in its README): each
loop measured without compilescope (measure.py: fresh processes, eager and compiled interleaved,
one thread, median of 20 steps; writes measured.json there), then each run under
`capturing()` for 40 steps (judge.py; writes judged.json there). Right = finding #1 is a verdict
exactly where the measurement says compiled is not at least 5% faster.
"""

from __future__ import annotations

import json
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "data" / "blind_verdict"
SUITE = {
    "name": "cpu-verdict-blind",
    "device": "CPU",
    "measures": "whether finding #1 says 'compiled is not faster' exactly where a measurement "
    "without compilescope says so, on 7 loops written blind",
}
# The records hold torch's version; the machine and date are the run's report's (RESULTS.md of
# 87f12c2, "The verdict, judged blind on a CPU"); Python's version was not recorded.
RECORDED = [
    ("data/blind_verdict/judged.json",
     {"machine": "x86_64, 2 cores", "torch": "2.14.1+cu130", "date": "2026-11-27"}, ""),
]  # fmt: skip
VERDICTS = ("compiled_slower", "compiled_not_faster")


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    """Rows of judged.json, with measured.json beside it."""
    import rows

    measured = json.loads((path.parent / "measured.json").read_text())["loops"]
    cmd = rows.command(SUITE["name"], args.split())
    out = []
    for loop, got in sorted(json.loads(path.read_text()).items()):
        if "error" in got:
            continue
        m = measured.get(f"{loop}.py", {})
        ratios = [p["ratio_eager_over_compiled"] for p in m.get("pairs", [])]
        first = got["top3"][0]["kind"] if got["top3"] else "none"
        said = first in VERDICTS
        right = said == (m.get("measured_verdict") == "not_faster")
        values = rows.spread(ratios)

        def add(metric, value, unit, _loop=loop, **more):
            out.append(rows.row(SUITE["name"], _loop, metric, value, unit=unit, prov=prov,
                                cmd=cmd, **more))  # fmt: skip

        add("eager / compiled, measured", values.pop("median"), "ratio", **values)
        add("finding #1", first, "text")
        add("right", "yes" if right else "no", "text")
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(SET / "measure.py", args)
    rows.run_script(SET / "judge.py", [])
    for name in ("measured.json", "judged.json"):
        (out / name).write_text((SET / name).read_text())
    return convert(out / "judged.json", rows.here(), " ".join(args))
