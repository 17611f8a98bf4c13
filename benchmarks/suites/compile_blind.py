"""The compile-time findings, judged blind on a CPU: 8 scripts written from torch's recipes.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-compile-blind [names...]

Each script of benchmarks/data/blind_compile/ (written from the regional compilation and
compile-time caching recipes, the recompilation docs, the max-autotune on CPU tutorial and
pytorch/pytorch#154652, without reading the findings code) runs once under
`capturing(fresh=True)` (judge.py; writes results.json there): is the source's remedy the
compile-time finding's first fix, or the #1 finding?
"""

from __future__ import annotations

import json
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "data" / "blind_compile"
SUITE = {
    "name": "cpu-compile-blind",
    "device": "CPU",
    "measures": "whether the compile-time findings name each script's remedy first, on 8 "
    "scripts written blind",
}
# From the run's report (RESULTS.md of 87f12c2, "Compile-time findings judged blind"); the
# record holds no versions, Python's was not recorded.
RECORDED = [
    ("data/blind_compile/results.json",
     {"machine": "x86_64, 2 cores", "torch": "2.14.1", "date": "2026-11-27"}, ""),
]  # fmt: skip


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    cmd = rows.command(SUITE["name"], args.split())
    out = []
    for r in json.loads(path.read_text())["results"]:
        case = r["script"].removesuffix(".py")

        def add(metric, value, _case=case):
            out.append(rows.row(SUITE["name"], _case, metric, value, unit="text", prov=prov,
                                cmd=cmd))  # fmt: skip

        titles = r.get("compile_time_first_fix_titles") or []
        add("compile-time finding's first fix", titles[0] if titles else "-")
        add("met", "yes" if r.get("expect_met") in (True, "True") else "no")
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(SET / "judge.py", args)
    (out / "results.json").write_text((SET / "results.json").read_text())
    return convert(out / "results.json", rows.here(), " ".join(args))
