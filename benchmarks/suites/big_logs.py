"""Big TORCH_TRACE logs: compilescope.load_trace against tlparse, time and peak memory.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-big-logs [--runs 5] [--ranks 8] [--copies 5]

1. The 2.7 MB GPT-2 fixture (tests/fixtures/gpt2.log.gz): tlparse (writing its report),
   load_trace (graphs parsed and kernels split on first use) and load_trace with every graph's
   nodes parsed and every output module split into kernels, alternating, each in a fresh
   process. Wall and CPU time of the process: the machine is shared, and CPU time is what
   contention does not stretch.
2. A multi-rank log of about 100 MB made here from the same fixture: each of --ranks rank files
   holds --copies copies of it, frame ids shifted per copy (payload checksums recomputed where a
   payload names a compile id), so every compile id is distinct. Open time and peak memory
   (the process's peak RSS above its RSS after imports) of load_trace, then every graph parsed;
   tlparse on one rank's file and on the whole folder (--all-ranks-html) beside it.
Prints markdown for RESULTS.md; nothing big is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gpt2.log.gz"
_FRAME = re.compile(r'"frame_id": (\d+)')
_PAYLOAD_ID = re.compile(r'"compile_id": "(\d+)/')
_CHECKSUM = re.compile(r'"has_payload": "[0-9a-f]+"')

# Runs in a fresh process: imports, then times one load and reports peak RSS above the start.
CHILD = r"""
import json, sys, time
sys.path.insert(0, {ext!r})
import compilescope

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(key + ":"))

rss = status("VmRSS")
start, cpu = time.perf_counter(), time.process_time()
cap = compilescope.load_trace({path!r})
opened, opened_cpu = time.perf_counter() - start, time.process_time() - cpu
nodes = kernels = 0
if {full!r}:
    for c in cap:
        kernels += len(c.kernels)
        for graphs in c.graphs.values():
            for g in graphs:
                nodes += len(g.nodes)
total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({{"open_s": opened, "open_cpu_s": opened_cpu, "total_s": total,
                  "total_cpu_s": total_cpu, "nodes": nodes, "kernels": kernels,
                  "compiles": len(cap), "peak_kib": status("VmHWM") - rss}}))
"""


def load_in_child(path: Path, full: bool) -> dict:
    code = CHILD.format(ext=str(ROOT / "ext"), path=str(path), full=full)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def tlparse_once(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one tlparse run (writing its report to a temporary folder)."""
    binary = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [binary, *args, "-o", out, "--no-browser", "--overwrite"],
            check=True,
            capture_output=True,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return wall, cpu


def spread(values: list[float], unit: str = "s", digits: int = 3) -> str:
    return (
        f"median {statistics.median(values):.{digits}f} {unit} (min {min(values):.{digits}f}, "
        f"max {max(values):.{digits}f}, n={len(values)})"
    )


def _shifted(form: str, shift: int, match: re.Match) -> str:
    return form.format(int(match.group(1)) + shift)


def make_big_log(folder: Path, ranks: int, copies: int) -> int:
    """Rank files of `copies` shifted copies of the GPT-2 log each; returns total bytes."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    records: list[tuple[str, list[str]]] = []  # header, payload lines (without the tab)
    for line in lines:
        if line.startswith("\t") and records:
            records[-1][1].append(line[1:])
        else:
            records.append((line, []))
    step = 1 + max(int(m) for line in lines for m in _FRAME.findall(line))
    total = 0
    for rank in range(ranks):
        out: list[str] = []
        for copy in range(copies):
            shift = copy * step
            for header, payload in records:
                head = _FRAME.sub(partial(_shifted, '"frame_id": {}', shift), header)
                head = head.replace("] {", f'] {{"rank": {rank}, ', 1)
                body = payload
                text = "\n".join(payload)
                if shift and _PAYLOAD_ID.search(text):
                    text = _PAYLOAD_ID.sub(partial(_shifted, '"compile_id": "{}/', shift), text)
                    body = text.split("\n")
                    digest = hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
                    head = _CHECKSUM.sub(f'"has_payload": "{digest}"', head)
                out.append(head)
                out.extend("\t" + p for p in body)
        target = folder / f"dedicated_log_torch_trace_rank_{rank}_bench.log"
        target.write_text("\n".join(out) + "\n", encoding="utf-8")
        total += target.stat().st_size
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    FOUND.clear()
    import torch  # only for the version line

    print(f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, ", end="")
    print(f"{len(__import__('os').sched_getaffinity(0))} cores; Python {platform.python_version()}")
    tl = subprocess.run(
        [shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse")), "--version"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"torch {torch.__version__} (not used to load), {tl}; {time.strftime('%Y-%m-%d')}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = tmp / "gpt2.log"
        small.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
        tl, lazy, full, peak = [], [], [], []
        for _ in range(args.runs):  # alternating, so load drifts hit all three alike
            tl.append(tlparse_once([str(small)]))
            lazy.append(load_in_child(small, False))
            full.append(load_in_child(small, True))
            peak.append(full[-1]["peak_kib"] / 1024)
        size = small.stat().st_size / 1e6
        print(
            f"\n### GPT-2 fixture ({size:.1f} MB, {full[-1]['nodes']} graph nodes, "
            f"{full[-1]['kernels']} kernels)\n"
        )
        CASE[0] = f"GPT-2 fixture, {size:.1f} MB"
        report("tlparse (writes its HTML report)", [t[0] for t in tl], [t[1] for t in tl])
        report("load_trace (lazy)", *times(lazy, "open"))
        report(FULL, *times(full, "total"))
        print(f"- peak memory above start, all parsed: {spread(peak, 'MB', 1)}")
        FOUND.append((f"{CASE[0]}: {FULL}", "peak memory above start", "MB", peak))
        for what, index in (("wall", 0), ("CPU", 1)):
            key = "total_s" if index == 0 else "total_cpu_s"
            ratio = [f[key] / t[index] for f, t in zip(full, tl, strict=True)]
            print(f"- all parsed / tlparse, {what}, per alternating run: {spread(ratio, 'x', 2)}")
            FOUND.append((f"{CASE[0]}: {FULL}", f"/ tlparse, {what}, per run", "x", ratio))

        big = tmp / "ranks"
        big.mkdir()
        total = make_big_log(big, args.ranks, args.copies)
        one = sorted(big.iterdir())[0]
        opened, parsed, tl_one, tl_all = [], [], [], []
        for _ in range(args.runs):
            opened.append(load_in_child(big, False))
            parsed.append(load_in_child(big, True))
            tl_one.append(tlparse_once([str(one)]))
            tl_all.append(tlparse_once([str(big), "--all-ranks-html"]))
        print(
            f"\n### Multi-rank log: {args.ranks} ranks x {args.copies} copies of the fixture, "
            f"{total / 1e6:.0f} MB, {opened[-1]['compiles']} compile ids\n"
        )
        CASE[0] = f"{args.ranks} ranks x {args.copies} copies, {total / 1e6:.0f} MB"
        report(LAZY, *times(opened, "open"))
        ratios = [r["peak_kib"] * 1024 / total for r in opened]
        print(f"- peak memory above start / log size, lazy: {spread(ratios, 'x', 2)}; target <= 3")
        FOUND.append((f"{CASE[0]}: {LAZY}", "peak memory above start / log size", "x", ratios))
        ratios = [r["peak_kib"] * 1024 / total for r in parsed]
        print(f"- the same, all parsed: {spread(ratios, 'x', 2)}")
        FOUND.append((f"{CASE[0]}: {FULL}", "peak memory above start / log size", "x", ratios))
        report(FULL, *times(parsed, "total"))
        size = one.stat().st_size / 1e6
        report(f"tlparse, one rank's file ({size:.0f} MB)", *zip(*tl_one, strict=True))
        report("tlparse --all-ranks-html, the whole folder", *zip(*tl_all, strict=True))
    if args.json:
        import rows

        rows.save_figures(args.json, FOUND)


def times(results: list[dict], what: str) -> tuple[list[float], list[float]]:
    return [r[f"{what}_s"] for r in results], [r[f"{what}_cpu_s"] for r in results]


CASE = [""]  # the log the figures being printed are of
FULL = "load_trace + every graph parsed, every kernel split"
LAZY = "load_trace (lazy; target <= 1 s)"
FOUND: list[tuple] = []  # (case, metric, unit, values), for --json


def report(label: str, wall, cpu) -> None:
    print(f"- {label}: wall {spread(list(wall))}; CPU {spread(list(cpu))}")
    FOUND.append((f"{CASE[0]}: {label}", "wall", "s", list(wall)))
    FOUND.append((f"{CASE[0]}: {label}", "CPU", "s", list(cpu)))


SUITE = {
    "name": "cpu-big-logs",
    "device": "CPU",
    "measures": "`load_trace` of the GPT-2 log and of a synthesized multi-rank log against "
    "tlparse: time and peak memory (its `make_big_log` makes the big logs of other suites)",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    record = json.loads(path.read_text())
    record["provenance"] = {**record.get("provenance", {}), **{k: v for k, v in prov.items() if v}}
    return rows.figures(SUITE["name"], record, rows.command(SUITE["name"], args.split()))


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [*args, "--json", str(out / "figures.json")])
    return convert(out / "figures.json", {}, " ".join(args))


RECORDED = [("raw/big_logs/big_logs_2026-11-27.json", {}, "--runs 5")]


if __name__ == "__main__":
    main()
