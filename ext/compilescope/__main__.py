"""Command line: `python -m compilescope report|summary|ranks PATH`, and `demo`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from . import __version__

if TYPE_CHECKING:
    from .model.capture import Capture

_DESCRIPTION = """\
See what torch.compile did, from a TORCH_TRACE log (a file or a folder: one log per rank of a
torchrun job), a folder of write_rank captures, or a capture saved as JSON."""

_EPILOG = """\
examples:
  TORCH_TRACE=/tmp/tracedir python train.py      # torch writes one log per process
  python -m compilescope report /tmp/tracedir --open
  python -m compilescope report capture.json -o capture.html
  python -m compilescope report /tmp/tracedir --pages -o job_report   # job_report/index.html
  python -m compilescope summary /tmp/tracedir --json capture.json
  python -m compilescope ranks /tmp/tracedir --world-size 8

exit codes:
  0  done; for `ranks`: the ranks agree (or there is only one)
  1  `ranks`: the ranks diverge (they differ in what both of their records hold)
  2  the input cannot be read (the message names it), or the command line is wrong
  3  `ranks`: a rank's record is incomplete (its log is missing, empty, ends early or lost
     entries); the ranks agree as far as their records go, and nothing past where a record
     ends was compared
"""


def _demo() -> int:
    import torch

    from . import capture

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(32)
            self.fc = torch.nn.Linear(32, 32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.nn.functional.gelu(self.fc(self.norm(x)))

    print("compiling a small block (forward and backward) with torch.compile ...", flush=True)
    cap = capture(Block(), torch.randn(8, 32))
    print(cap)
    first = cap[0]
    print("\nkernels:")
    for kernel in first.kernels:
        lines = ", ".join(f"line {loc.line}" for loc in kernel.source_lines[:3])
        print(f"  {kernel.language:6} {kernel.name}  <- {', '.join(kernel.fused_nodes)}  {lines}")
    return 0


def _columns() -> int:
    """The terminal's width, as shutil.get_terminal_size finds it ($COLUMNS, else the terminal
    of stdout, else 80), without importing shutil: argparse's formatter does for every argument
    added, and shutil brings bz2 and lzma, 2 ms of each command (issue 34)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout else 0
        except (AttributeError, ValueError, OSError):  # closed, detached, not a terminal
            columns = 0
    return columns or 80


class _Help(argparse.HelpFormatter):
    """argparse's help layout, at the width argparse would use (see _columns)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)


class _RawHelp(_Help, argparse.RawDescriptionHelpFormatter):
    """argparse.RawDescriptionHelpFormatter, sized as _Help."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compilescope",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=_RawHelp,
    )
    parser.add_argument("--version", action="version", version=f"compilescope {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    what = "a TORCH_TRACE log or folder, a folder of write_rank captures, or a saved capture"
    report = commands.add_parser(
        "report",
        help="write the offline HTML report (one file, or a folder of pages for big logs)",
        description="Write a standalone HTML report of PATH, no network needed: the interactive "
        "view with its findings, graphs, kernels and, for several ranks, the rank report. One "
        "file for small logs; for logs over 32 MiB (or --pages) a folder: index.html and a page "
        "per compile id. Exit code 0 once written (see `ranks` for a check that fails when "
        "ranks differ).",
        formatter_class=_Help,
    )
    report.add_argument("path", metavar="PATH", help=what)
    report.add_argument(
        "-o",
        "--output",
        help="where: a file, or with pages a folder (default: compilescope_report.html, or the "
        "folder compilescope_report/)",
    )
    pages = report.add_mutually_exclusive_group()
    pages.add_argument(
        "--pages",
        action="store_true",
        help="write a folder: index.html (rank report, findings, compile ids) that opens at "
        "once, and one page per compile id beside it; the default for logs over 32 MiB",
    )
    pages.add_argument("--one-file", action="store_true", help="one file, whatever the size")
    report.add_argument(
        "--jobs", type=int, help="processes that read rank logs for --pages (default: one a core)"
    )
    report.add_argument("--open", action="store_true", help="open it in the web browser")
    report.add_argument("--world-size", type=int, help="ranks the job had (for the rank report)")
    summary = commands.add_parser(
        "summary", help="print what each compile did", formatter_class=_Help
    )
    summary.add_argument("path", metavar="PATH", help=what)
    summary.add_argument("--json", metavar="OUT", help="also write the capture as JSON to OUT")
    ranks = commands.add_parser(
        "ranks",
        help="compare the ranks of a distributed job (exit code 0 agree, 1 diverge, 3 incomplete)",
        description="Group the ranks by what they compiled and say where each group parts; "
        "a rank whose record is missing, empty or ends early is reported as incomplete and "
        "compared only as far as its record goes.",
        epilog=_EPILOG.split("\n\n", 1)[1],
        formatter_class=_RawHelp,
    )
    ranks.add_argument("path", metavar="PATH", help=what)
    ranks.add_argument("--world-size", type=int, help="ranks the job had (a missing one counts)")
    ranks.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    ranks.add_argument(
        "--jobs", type=int, help="processes that read rank logs (default: one a core)"
    )
    commands.add_parser(
        "demo",
        help="capture a small model and print what torch.compile did",
        formatter_class=_Help,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command line `argv` (else sys.argv[1:]); returns the exit code. Called without
    `argv` (the console script, `python -m compilescope`), the process is the command: a
    one-file report ends the process once the page is written (`_end_now`)."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        return _demo()
    from .trace.sources import open_capture

    try:
        if args.command == "report" and _as_pages(args):
            return _report_pages(args)
        if args.command == "ranks":
            return _ranks(args)
        cap = open_capture(args.path)
        if args.command == "report":
            code = _report(cap, args, shared=argv is None)
            if argv is None:
                _end_now(code)
            return code
        print(cap)
        if args.json:
            Path(args.json).write_text(cap.to_json(), encoding="utf-8")
        return 0
    except (OSError, ValueError) as error:
        message = str(error)
        if args.path not in message and not isinstance(error, OSError):
            message = f"{args.path}: {message}"
        print(f"compilescope: {message}", file=sys.stderr)
        return 2


def _end_now(code: int) -> NoReturn:
    """End the process at once, as mypy does: the page is written and closed, and tearing the
    interpreter down (freeing the report's objects one by one, its cached layouts among them,
    and a last collection) took 12 ms of the GPT-2 log's 0.25 s report (issue 34), for memory
    the system takes back at exit anyway. No threads, child processes or atexit work run here;
    stdout and stderr are flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    os._exit(code)


def _ranks(args: argparse.Namespace) -> int:
    from .report_job import rank_report

    # Each rank's record only: rank logs read in parallel, or write_rank summaries.
    report = rank_report(args.path, args.world_size, args.jobs)
    print(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=1), encoding="utf-8")
    return report.exit_code


# Logs past this many bytes in all get a folder (index and pages) by default, not one file.
PAGES_FROM_BYTES = 32 * 2**20


def _as_pages(args: argparse.Namespace) -> bool:
    # Not report_job (the folder's code): one file's report imports only what it uses.
    from .trace.reader import logs_bytes

    if args.pages or args.one_file:
        return bool(args.pages)
    return logs_bytes(args.path) > PAGES_FROM_BYTES


def _report_pages(args: argparse.Namespace) -> int:
    from .report_job import write_report_folder

    folder = Path(args.output or "compilescope_report")
    if folder.suffix == ".html":
        folder = folder.with_suffix("")
    index, count, ranks = write_report_folder(args.path, folder, args.world_size, args.jobs)
    what = f"{count} compile ids, a page each"
    if ranks is not None:
        what += f"; ranks: {ranks.status}"
    print(f"compilescope: wrote {index.resolve()} ({what})")
    if args.open:
        import webbrowser

        webbrowser.open(index.resolve().as_uri())
    return 0


def _report(cap: Capture, args: argparse.Namespace, shared: bool = False) -> int:
    """The one-file report. `shared`: this process is the command, so the graphs' payloads
    may be made with a forked helper (views/offline/shared_drawing.py): the same page, sooner."""
    from . import findings
    from .views.offline.report import write_report

    if args.world_size is not None:
        cap = replace(cap, world_size=args.world_size)
    output = args.output or "compilescope_report.html"
    path = write_report(cap, output, found=lambda: findings(cap), shared=shared).resolve()
    what = f"{len(cap.compiles)} compile ids"
    if cap.several_ranks:
        what += f"; ranks: {cap.compare_ranks().status}"
    print(f"compilescope: wrote {path} ({what})")
    if args.open:
        import webbrowser

        webbrowser.open(path.as_uri())
    return 0


if __name__ == "__main__":
    sys.exit(main())
