"""The benchmarks' runner: list the suites, run one, convert its records, regenerate RESULTS.md."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The suites import each other, models and rows by their top-level names, and start workers
# as fresh processes of their own files: both need ext/ and benchmarks/ on the path.
sys.path[:0] = [str(HERE), str(ROOT / "ext")]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT / "ext"), str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]
)

import results_page  # noqa: E402
import rows  # noqa: E402
from suites import modules  # noqa: E402

USAGE = """\
  python -m benchmarks list
  python -m benchmarks run SUITE [--out DIR] [suite's own options]
  python -m benchmarks convert SUITE [RECORD... --date D --machine M ...] [--keep]
  python -m benchmarks results [--check]

A run writes its records, provenance.json and SUITE.jsonl (its rows) under --out. To commit its
figures: copy the records (with provenance.json) under benchmarks/raw/, list them in the
suite's RECORDED, then `convert SUITE --keep` (results/SUITE.jsonl is RECORDED converted) and
`results` (RESULTS.md). `convert SUITE RECORD...` shows the rows of records not listed yet."""


def show(found: list[dict]) -> None:
    for r in found:
        spread = f" ({r['low']}-{r['high']})" if r["low"] is not None else ""
        print(f"{r['case']:<32} {r['metric']:<40} {r['median']}{spread} n={r['n']}")


def cmd_list() -> None:
    for name, module in modules().items():
        print(f"{name:<22} {module.SUITE['device']:<14} {module.SUITE['measures']}")


def cmd_run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks run")
    parser.add_argument("suite", choices=list(modules()))
    parser.add_argument("--out", type=Path, default=None)
    args, own = parser.parse_known_args(argv)
    module = modules()[args.suite]
    out = args.out or Path(tempfile.mkdtemp(prefix=f"bench-{args.suite}-"))
    out.mkdir(parents=True, exist_ok=True)
    # Where and with what it ran, for converting its records again later on another machine.
    here = rows.here(gpu="GPU" in module.SUITE["device"])
    (out / "provenance.json").write_text(json.dumps(here, indent=1))
    found = module.run(own, out)
    rows.write(out / f"{args.suite}.jsonl", found)
    show(found)
    print(f"{len(found)} rows in {out / f'{args.suite}.jsonl'}")


def cmd_convert(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks convert")
    parser.add_argument("suite", choices=list(modules()))
    parser.add_argument("records", nargs="*", type=Path, help="default: the suite's RECORDED")
    for key in rows.PROVENANCE:
        parser.add_argument(f"--{key}", default=None, help="where the record does not say")
    parser.add_argument("--args", default="", help="the suite options the record was run with")
    parser.add_argument("--keep", action="store_true", help="write results/SUITE.jsonl")
    args = parser.parse_args(argv)
    module = modules()[args.suite]
    if args.records:
        given = {k: getattr(args, k) for k in rows.PROVENANCE}
        found = [
            r
            for p in args.records
            for r in module.convert(p, rows.provenance_for(p, given), args.args)
        ]
        show(found)
        return
    found = rows.recorded(module)
    show(found)
    if args.keep:
        rows.write(rows.RESULTS / f"{args.suite}.jsonl", found)
        print(f"wrote {rows.RESULTS / f'{args.suite}.jsonl'} ({len(found)} rows)")


def cmd_results(argv: list[str]) -> int:
    check = "--check" in argv
    page = results_page.page(rows.committed(), modules())
    target = HERE / "RESULTS.md"
    if check:
        same = target.exists() and target.read_text() == page
        print("RESULTS.md is up to date" if same else "RESULTS.md differs: run `results`")
        return 0 if same else 1
    target.write_text(page)
    print(f"wrote {target} ({page.count(chr(10))} lines)")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("list", "run", "convert", "results"):
        print(__doc__ + "\n\n" + USAGE)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "list":
        cmd_list()
    elif command == "run":
        cmd_run(rest)
    elif command == "convert":
        cmd_convert(rest)
    else:
        return cmd_results(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
