"""A synthesized 1 GB, 64-rank job: `report` (folder of pages) against tlparse, and the index's
first paint in Chromium.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-big-job [--runs 3] [--ranks 64] [--copies 6] [--distinct]
                                       [--jobs N] [--no-tlparse]

The job is `big_logs.make_big_log` (each rank: --copies shifted copies of the GPT-2 log).
With --distinct, every graph's text differs per rank (a `# File:` comment gets the rank), so no
rank shares a parsed graph or a layout with another: no cache hits. Each run, in turn:
`python -m compilescope report JOB --pages -o OUT` (the default at this size), then
`tlparse JOB --all-ranks-html`, each timed by wall clock with the peak RSS of its whole process
tree (main process and workers, summed, sampled every 0.1 s); then the index opened 5 times in
headless Chromium (first contentful paint, from navigation start). Prints markdown: median and
spread (min-max) per figure. Everything is written under a temporary folder, deleted after.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from suites.big_logs import make_big_log  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip
_FILE_COMMENT = re.compile(r"^(\s*# File: .*)$")
_CHECKSUM = re.compile(r'"has_payload": "[0-9a-f]+"')


def distinct_per_rank(folder: Path) -> None:
    """Make every graph text differ per rank: its `# File:` comments end with ` [rank N]`."""
    for log in sorted(folder.iterdir()):
        rank = int(re.search(r"rank_(\d+)_", log.name).group(1))  # type: ignore[union-attr]
        records: list[tuple[str, list[str]]] = []  # header, payload lines (without the tab)
        with log.open(encoding="utf-8") as handle:
            for line in handle:
                line = line.rstrip("\n")
                if line.startswith("\t") and records:
                    records[-1][1].append(line[1:])
                else:
                    records.append((line, []))
        out: list[str] = []
        for head, body in records:
            changed = [_FILE_COMMENT.sub(rf"\1 [rank {rank}]", line) for line in body]
            if changed != body:
                text = "\n".join(changed).encode()
                digest = hashlib.md5(text, usedforsecurity=False).hexdigest()
                head = _CHECKSUM.sub(f'"has_payload": "{digest}"', head)
            out.append(head)
            out.extend("\t" + line for line in changed)
        log.write_text("\n".join(out) + "\n", encoding="utf-8")


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak MiB (RSS of the process tree, summed, sampled every 0.1 s)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                rss = 0
                for p in tree:
                    try:
                        rss += p.memory_info().rss
                    except psutil.Error:
                        pass
                peak = max(peak, rss)
            except psutil.Error:
                pass
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {err.decode()[-2000:]}")
    return wall, peak / 2**20


def first_paints(index: Path, loads: int) -> list[float]:
    """First contentful paint of `index` in headless Chromium, ms, one fresh page per load."""
    from playwright.sync_api import sync_playwright

    paints = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for _ in range(loads):
            page = browser.new_page()
            page.goto(index.as_uri(), wait_until="load")
            fcp = page.evaluate(
                "() => new Promise(done => { const get = () => { const e = performance"
                ".getEntriesByName('first-contentful-paint')[0]; if (e) done(e.startTime);"
                " else setTimeout(get, 20); }; get(); })"
            )
            paints.append(float(fcp))
            page.close()
        browser.close()
    return paints


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} {unit} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--distinct", action="store_true", help="graphs differ per rank")
    parser.add_argument("--jobs", type=int, help="compilescope's worker processes")
    parser.add_argument("--no-tlparse", action="store_true")
    parser.add_argument("--loads", type=int, default=5, help="index loads in Chromium per run")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    with tempfile.TemporaryDirectory(prefix="bench_big_job_") as tmp:
        job = Path(tmp) / "job"
        job.mkdir()
        made = time.perf_counter()
        size = make_big_log(job, args.ranks, args.copies)
        if args.distinct:
            distinct_per_rank(job)
            size = sum(f.stat().st_size for f in job.iterdir())
        print(f"job: {args.ranks} ranks, {size / 2**20:.0f} MiB, made in "
              f"{time.perf_counter() - made:.0f} s", flush=True)  # fmt: skip
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        paints: list[float] = []
        index_bytes = folder_bytes = pages = 0
        for run in range(args.runs):
            out = Path(tmp) / f"report_{run}"
            command = [sys.executable, "-m", "compilescope", "report", str(job), "--pages"]
            command += ["-o", str(out)]
            command += ["--jobs", str(args.jobs)] if args.jobs else []
            ours.append(timed(command))
            print(f"run {run + 1}: compilescope {ours[-1][0]:.1f} s, {ours[-1][1]:.0f} MiB",
                  flush=True)  # fmt: skip
            paints += first_paints(out / "index.html", args.loads)
            index_bytes = (out / "index.html").stat().st_size
            files = [p for p in out.rglob("*") if p.is_file()]
            folder_bytes, pages = sum(p.stat().st_size for p in files), len(files) - 2
            shutil.rmtree(out)
            if not args.no_tlparse:
                where = Path(tmp) / f"tlparse_{run}"
                theirs.append(timed([tlparse, str(job), "--all-ranks-html", "-o", str(where),
                                     "--no-browser", "--overwrite"]))  # fmt: skip
                print(f"run {run + 1}: tlparse {theirs[-1][0]:.1f} s, {theirs[-1][1]:.0f} MiB",
                      flush=True)  # fmt: skip
                shutil.rmtree(where)
    load = psutil.getloadavg()
    print(f"\n{platform.machine()}, {psutil.cpu_count()} cores, Python {platform.python_version()}"
          f", load average at the end {load[0]:.1f}; {args.runs} runs (median (min-max))\n")  # fmt: skip
    what = f"{args.ranks} ranks, {size / 2**30:.2f} GB" + (
        ", distinct graphs" if args.distinct else ""
    )
    print("| job | tool | wall | peak RSS, all processes |")
    print("|---|---|---|---|")
    print(f"| {what} | compilescope report (--pages) | {spread([w for w, _ in ours], 's')} | "
          f"{spread([m for _, m in ours], 'MiB', 0)} |")  # fmt: skip
    if theirs:
        print(f"| {what} | tlparse --all-ranks-html | {spread([w for w, _ in theirs], 's')} | "
              f"{spread([m for _, m in theirs], 'MiB', 0)} |")  # fmt: skip
    print(f"\nindex.html {index_bytes / 2**20:.1f} MiB, report folder {folder_bytes / 2**20:.0f} "
          f"MiB ({pages} pages); index first contentful paint in Chromium: "
          f"{spread(paints, 'ms', 0)} over {len(paints)} loads")  # fmt: skip
    if args.json:
        import rows

        found = [(what, "compilescope report --pages, wall", "s", [w for w, _ in ours]),
                 (what, "compilescope report --pages, peak RSS", "MiB", [m for _, m in ours]),
                 (what, "index first contentful paint", "ms", paints)]  # fmt: skip
        if theirs:
            found += [(what, "tlparse --all-ranks-html, wall", "s", [w for w, _ in theirs]),
                      (what, "tlparse --all-ranks-html, peak RSS", "MiB", [m for _, m in theirs])]  # fmt: skip
        rows.save_figures(args.json, found)


SUITE = {
    "name": "cpu-big-job",
    "device": "CPU",
    "measures": "`compilescope report --pages` of a synthesized 1 GB, 64-rank job against "
    "tlparse --all-ranks-html: wall, peak memory of all processes, the index's first paint",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    return rows.convert_figures(SUITE["name"], path, prov, args)


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    return rows.run_figures(Path(__file__), SUITE["name"], args, out)


# The last run of this code's ancestor was reported, not recorded: transcribed from RESULTS.md
# of 87f12c2 ("Two processes for the one-file report", the 1 GB job).
RECORDED = [("raw/big_job/distinct_2026-11-26.json", {}, "--runs 1 --distinct")]


if __name__ == "__main__":
    main()
