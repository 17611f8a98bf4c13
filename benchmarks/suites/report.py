"""The one-file report of the GPT-2 log against tlparse: time and peak memory (issue 34).

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-report [--runs 9] [--before REV] [--log LOG]

Each run, in turn and in a fresh process: `tlparse LOG -o DIR --no-browser --overwrite`, then
`compilescope report LOG -o out.html` (the console script), and with --before the same command
of compilescope at git revision REV (exported with `git archive` to a temporary folder, put
first on PYTHONPATH). The log is the GPT-2 fixture (tests/fixtures/gpt2.log.gz), decompressed
once, read by both tools. Wall time from start to exit, CPU time (user + system) and peak RSS
(GNU time's %M: `ru_maxrss` of the process, the larger of the report's two processes: it
forks a helper that makes graph payloads, views/offline/shared_drawing.py). Then three more runs in
which each process reports its own peak, and the helper the pages it does not share: the two
together is the main peak plus those.

compilescope runs as installed: with its bytecode cached (pip writes the .pyc files when it
installs a wheel). Python is told to keep that cache in a temporary folder
(PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE unset), filled by one run of each command before
the timed ones; --no-bytecode-cache adds an arm that compiles compilescope's sources on every
run, as a checkout does under PYTHONDONTWRITEBYTECODE=1. Prints markdown for RESULTS.md:
median (min-max) of each figure; nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gpt2.log.gz"
BIN = Path(sys.executable).parent
GNU_TIME = "/usr/bin/time"


def _tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name) or name


def run_once(command: list[str], env: dict[str, str], scratch: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of `command`, run to its end. Started by GNU
    time, whose %M is the command's own peak: a process started from this Python directly
    counts this Python's pages before its exec (vfork) in its `ru_maxrss`."""
    measured = scratch / "time.txt"
    start = time.perf_counter()
    subprocess.run(
        [GNU_TIME, "-f", "%U %S %M", "-o", str(measured), *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    user, system, peak_kib = measured.read_text().split()[-3:]
    return wall, float(user) + float(system), int(peak_kib) / 1024


# Run in a fresh interpreter: the one-file report as the command runs it (its helper forked,
# views/offline/shared_drawing.py), each process printing its peak RSS (VmHWM) and, for the helper, the
# pages it does not share with the main process (smaps_rollup's Private_*): the two processes'
# memory together is the main one's peak plus those.
_TWO_PROCESSES = """
import os, sys
import compilescope.views.offline.shared_drawing as shared

def memory():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    rollup = dict(line.split(":", 1) for line in open("/proc/self/smaps_rollup") if ":" in line)
    kib = lambda text: int(text.split()[0])
    private = kib(rollup["Private_Clean"]) + kib(rollup["Private_Dirty"])
    return kib(status["VmHWM"]) / 1024, private / 1024

helper_main = shared.SharedDrawing._helper_main
def instrumented(self, *args):
    end = os._exit
    def exit_with_figures(code):
        print("helper", *memory(), file=sys.stderr, flush=True)
        end(code)
    os._exit = exit_with_figures
    helper_main(self, *args)
shared.SharedDrawing._helper_main = instrumented
end = os._exit
def main_exit(code):
    print("main", *memory(), file=sys.stderr, flush=True)
    end(code)
os._exit = main_exit
from compilescope.__main__ import main
sys.argv = ["compilescope", "report", sys.argv[1], "-o", sys.argv[2]]
main()
"""


def two_processes(log: Path, out: Path, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Peak RSS and private MB of the report's main process and of its helper."""
    done = subprocess.run(
        [sys.executable, "-c", _TWO_PROCESSES, str(log), str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = {}
    for line in done.stderr.splitlines():
        name, *values = line.split()
        if name in ("main", "helper") and len(values) == 2:
            figures[name] = (float(values[0]), float(values[1]))
    return figures


def figure(values: list[float], digits: int, unit: str) -> str:
    return (
        f"{statistics.median(values):.{digits}f} {unit} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", metavar="REV", help="also time compilescope at git REV")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    parser.add_argument(
        "--copies", type=int, default=1,
        help="a log of this many copies of the GPT-2 log, frame ids shifted (5: the issue's "
        "13.7 MB single-rank log); 1: the fixture as it is",
    )  # fmt: skip
    parser.add_argument(
        "--ranks", type=int, default=1,
        help="a job folder of this many rank files of --copies copies each (2 and 5: the "
        "issue's 27 MB two-rank job, one report page; tlparse gets --all-ranks-html)",
    )  # fmt: skip
    parser.add_argument(
        "--log", type=Path,
        help="another TORCH_TRACE log (.log or .log.gz), read by both tools instead of GPT-2's "
        "(raw/resnet18_h200.log.gz: a CNN's, from gpu_cnn_log.py)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    tlparse = _tool("tlparse")
    version = subprocess.run([tlparse, "--version"], capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        log = tmp_path / "gpt2.log"
        if args.log is not None:
            data = args.log.read_bytes()
            log.write_bytes(gzip.decompress(data) if args.log.suffix == ".gz" else data)
        elif args.ranks > 1:
            sys.path.insert(0, str(Path(__file__).parents[1]))
            from suites.big_logs import make_big_log

            log = tmp_path / "job"
            log.mkdir()
            make_big_log(log, args.ranks, args.copies)
        elif args.copies > 1:
            sys.path.insert(0, str(Path(__file__).parents[1]))
            from suites.big_logs import make_big_log

            make_big_log(tmp_path, 1, args.copies)
            (tmp_path / "dedicated_log_torch_trace_rank_0_bench.log").rename(log)
        else:
            log.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
        report = [_tool("compilescope"), "report", str(log), "-o", str(tmp_path / "out.html")]
        arms: dict[str, tuple[list[str], dict[str, str]]] = {
            "tlparse": (
                [tlparse, str(log), "-o", str(tmp_path / "tl"), "--no-browser", "--overwrite"]
                + (["--all-ranks-html"] if args.ranks > 1 else []),
                cached,
            ),
            "compilescope report": (report, cached),
        }
        if args.before:
            old = tmp_path / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "ext"],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            before = {**cached, "PYTHONPATH": str(old / "ext")}
            arms[f"compilescope report at {args.before}"] = (report, before)
        if args.no_bytecode_cache:
            arms["compilescope report, no bytecode cache"] = (
                report,
                {**cached, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path)},
            )
        for command, env in arms.values():  # fills the bytecode caches; not timed
            run_once(command, env, tmp_path)
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in arms}
        for _ in range(args.runs):  # interleaved: load drifts hit every arm alike
            for name, (command, env) in arms.items():
                results[name].append(run_once(command, env, tmp_path))
        files = sorted(log.iterdir()) if log.is_dir() else [log]
        size = sum(f.stat().st_size for f in files) / 1e6
        split = [two_processes(log, tmp_path / "split.html", cached) for _ in range(3)]

    cores = len(os.sched_getaffinity(0))
    print(f"Machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, ")
    what = f"{args.copies} copies of the GPT-2 log" if args.copies > 1 else "GPT-2 log"
    what = f"{args.ranks} ranks of {what}" if args.ranks > 1 else what
    what = args.log.name if args.log is not None else what
    print(f"{version.strip()}, {time.strftime('%Y-%m-%d')}; {what}, {size:.1f} MB")
    print(f"each figure: median (min-max) of {args.runs} runs, fresh processes, interleaved\n")
    print("| command | wall | CPU | peak RSS |")
    print("|---|---|---|---|")
    for name, rows in results.items():
        wall, cpu, rss = (list(column) for column in zip(*rows, strict=True))
        print(
            f"| {name} | {figure(wall, 3, 's')} | {figure(cpu, 3, 's')} | {figure(rss, 1, 'MB')} |"
        )
    tl = results["tlparse"]
    ours = results["compilescope report"]
    wall_ratio = [o[0] / t[0] for o, t in zip(ours, tl, strict=True)]
    rss_ratio = [o[2] / t[2] for o, t in zip(ours, tl, strict=True)]
    faster = sum(r < 1 for r in wall_ratio)
    print(
        f"\n- compilescope / tlparse, per interleaved run: wall {figure(wall_ratio, 2, 'x')} "
        f"(faster in {faster} of {len(wall_ratio)}), "
    )
    print(f"  peak RSS {figure(rss_ratio, 2, 'x')} (targets: wall <= 1, peak RSS <= 3)")
    if args.json:
        record = {"log": f"{what}, {size:.1f} MB", "tlparse": version.strip(), "runs": results,
                  "wall_ratio": wall_ratio, "rss_ratio": rss_ratio}  # fmt: skip
        args.json.write_text(json.dumps(record, indent=1))
    helpers = [run["helper"] for run in split if "helper" in run]
    if helpers:
        mains = [run["main"][0] for run in split if "helper" in run]
        together = [m + h[1] for m, h in zip(mains, helpers, strict=True)]
        tl_peak = statistics.median(t[2] for t in tl)
        print(
            f"- the report's two processes ({len(helpers)} runs): main peak "
            f"{figure(mains, 1, 'MB')}, helper peak {figure([h[0] for h in helpers], 1, 'MB')}, "
            f"of it its own pages {figure([h[1] for h in helpers], 1, 'MB')}; together "
            f"{figure(together, 1, 'MB')}, {statistics.median(together) / tl_peak:.2f}x "
            "tlparse's median peak"
        )
    else:
        print("- the report ran in one process (no helper: one core, or one graph)")


SUITE = {
    "name": "cpu-report",
    "device": "CPU",
    "measures": "`compilescope report LOG` against tlparse on the same log: wall time and peak "
    "memory, fresh processes, interleaved; and what each piece of the report's machinery buys",
}
# The machinery's figures were measured with a one-off script (git archive of the code, one
# piece edited out per variant; not kept), and transcribed into their record from the run's
# report (RESULTS.md of 87f12c2, "The report command's machinery").
RECORDED = [
    ("raw/report/machinery_2026-11-27.json", {}, ""),
    ("raw/report/gpt2_2026-11-27.json", {}, ""),
    ("raw/report/gpt2.json", {}, "--runs 15"),
    ("raw/report/copies5.json", {}, "--copies 5 --runs 7"),
    ("raw/report/resnet18.json", {}, "--log benchmarks/raw/resnet18_h200.log.gz --runs 11"),
]


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    record = json.loads(path.read_text())
    given = {k: prov.get(k) or record.get("provenance", {}).get(k) for k in rows.PROVENANCE}
    out = []
    if "figures" in record:  # transcribed from a report
        return rows.figures(SUITE["name"], record, "")
    cmd = rows.command(SUITE["name"], args.split())
    for name, runs in record["runs"].items():
        for metric, column, unit, scale in (("wall", 0, "s", 1), ("peak RSS", 2, "MB", 1)):
            values = rows.spread([r[column] * scale for r in runs])
            out.append(rows.row(SUITE["name"], f"{record['log']}: {name}", metric,
                                values.pop("median"), unit=unit, prov=given, cmd=cmd, **values))  # fmt: skip
    for metric, key in (("report / tlparse, wall, per run", "wall_ratio"),
                        ("report / tlparse, peak RSS, per run", "rss_ratio")):  # fmt: skip
        values = rows.spread(record[key])
        out.append(rows.row(SUITE["name"], record["log"], metric, values.pop("median"),
                            unit="x", prov=given, cmd=cmd, **values))  # fmt: skip
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [*args, "--json", str(out / "report.json")])
    record = json.loads((out / "report.json").read_text())
    record["provenance"] = rows.here()
    (out / "report.json").write_text(json.dumps(record, indent=1))
    return convert(out / "report.json", {}, " ".join(args))


if __name__ == "__main__":
    main()
