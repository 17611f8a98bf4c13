"""Command line: `python -m compilescope demo`, `summary LOG` or `ranks LOGDIR`."""

from __future__ import annotations

import argparse
import json
import sys


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compilescope", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="capture a small model and print what torch.compile did")
    summary = commands.add_parser("summary", help="summarize a TORCH_TRACE file or folder")
    summary.add_argument("path")
    summary.add_argument("--json", metavar="OUT", help="also write the capture as JSON to OUT")
    ranks = commands.add_parser(
        "ranks",
        help="compare the ranks of a distributed job's TORCH_TRACE logs; "
        "exits 1 when they diverge, 0 when they agree",
    )
    ranks.add_argument("path")
    ranks.add_argument("--world-size", type=int, help="ranks the job had (a missing log diverges)")
    ranks.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo()
    from . import load_trace

    try:
        cap = load_trace(args.path)
    except (OSError, ValueError) as error:
        print(f"compilescope: {error}", file=sys.stderr)
        return 2
    if args.command == "ranks":
        report = cap.compare_ranks(args.world_size)
        print(report)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(report.to_dict(), handle, indent=1)
        return 1 if report.diverged else 0
    print(cap)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(cap.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
