"""Are two revisions' views the same on screen? Screenshots of each tab, pixel by pixel.

    .venv/bin/python benchmarks/screens_compare.py REV_A REV_B OUT [--log LOG ...]

For each revision (a git worktree under OUT, made once), `python -m compilescope report` writes
the one-file report of each log with that revision's code; Debian's Chromium opens it at
1400 x 1000 and screenshots every tab in turn. Each pair of screenshots is compared pixel by
pixel; OUT/screens.json lists the share of pixels that differ per log and tab, and OUT/diff/
holds an image of the differing pixels (in red) where any differ. Used for issue 33's "the
same screenshots before and after" on the restructuring commits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def worktree(rev: str, out: Path) -> Path:
    path = out / f"tree_{rev}"
    if not path.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), rev], cwd=ROOT,
                       check=True, capture_output=True)  # fmt: skip
    return path


def report(tree: Path, log: Path, html: Path) -> None:
    env = {"PYTHONPATH": str(tree / "ext"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(log), "-o", str(html)],
        cwd=tree, env=env, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"report at {tree.name} failed:\n{done.stderr[-3000:]}")


def screens(browser, html: Path, folder: Path) -> list[str]:
    """One screenshot per tab (first paint of each), named after the tab; their names."""
    folder.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(html.as_uri())
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=30_000)
    page.wait_for_timeout(500)
    names = []
    tabs = page.locator(".cs-tab")
    for i in range(tabs.count()):
        tab = tabs.nth(i)
        name = tab.get_attribute("data-tab") or str(i)
        tab.click()
        page.wait_for_timeout(700)  # the explorer's layout and fit
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        names.append(name)
    page.close()
    return names


def compare(a: Path, b: Path, diff: Path) -> dict:
    from PIL import Image, ImageChops

    ia, ib = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    if ia.size != ib.size:
        return {"same": False, "sizes": [ia.size, ib.size], "differing": None}
    delta = ImageChops.difference(ia, ib).convert("L").point(lambda v: 255 if v else 0)
    differing = ia.size[0] * ia.size[1] - delta.histogram()[0]
    if differing:
        diff.parent.mkdir(parents=True, exist_ok=True)
        red = Image.new("RGB", ia.size, (255, 0, 0))
        Image.composite(red, ia.point(lambda v: v // 3), delta).save(diff)
    return {"same": differing == 0, "differing": differing / (ia.size[0] * ia.size[1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("out", type=Path)
    parser.add_argument("--log", action="append", type=Path)
    args = parser.parse_args()
    logs = args.log or [
        ROOT / "tests/fixtures/gpt2.log.gz",
        ROOT / "tests/fixtures/graph_break.log.gz",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    result: dict = {"a": args.a, "b": args.b, "logs": {}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for log in logs:
            shots = {}
            for rev in (args.a, args.b):
                html = args.out / rev / f"{log.name}.html"
                html.parent.mkdir(parents=True, exist_ok=True)
                report(worktree(rev, args.out), log, html)
                shots[rev] = screens(browser, html, args.out / rev / log.name)
            tabs = {}
            for name in dict.fromkeys([*shots[args.a], *shots[args.b]]):
                pa, pb = (args.out / r / log.name / f"{name}.png" for r in (args.a, args.b))
                if not (pa.exists() and pb.exists()):
                    tabs[name] = {
                        "same": False,
                        "missing": [str(x) for x in (pa, pb) if not x.exists()],
                    }
                    continue
                tabs[name] = compare(pa, pb, args.out / "diff" / log.name / f"{name}.png")
            result["logs"][log.name] = tabs
        browser.close()
    (args.out / "screens.json").write_text(json.dumps(result, indent=1))
    for log, tabs in result["logs"].items():
        for name, r in tabs.items():
            print(f"{log:28} {name:14} {'same' if r['same'] else 'DIFFERS'} {r.get('differing')}")


if __name__ == "__main__":
    main()
