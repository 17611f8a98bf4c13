"""Two ranks on two GPUs (NCCL): DDP, FSDP2 and an all-reduce in a graph, compared across ranks.

    python benchmarks/recorders/gpu_ranks.py $OUT/ranks            # on the 2-GPU machine, in one go
    python benchmarks/recorders/gpu_ranks.py /tmp/ranks --device cpu --backend aot_eager   # a CPU check

Runs two `torchrun --nproc-per-node 2` jobs of this same file (`--worker`), each under
TORCH_TRACE and with `compilescope.capturing()` inside every rank:
- `agree`: every rank runs the same steps; the rank report must say the ranks agree.
- `diverge`: rank 1 feeds its last DDP step a longer sequence and recompiles; the report must
  name rank 1 and the compile where it parts.
Each job trains a small GPT-like model three ways: under DDP (4 MiB buckets, so Dynamo's
DDPOptimizer splits the graph), under FSDP2 (`fully_shard` per block), and a row-parallel
layer whose all-reduce (`funcol.all_reduce`) is inside the compiled graph.
Writes to OUT: `gpu_ranks.md` and `gpu_ranks.json` (figures), `ranks_<job>.txt/.json` (the
rank report), `torchrun_<job>.log`, and per job a trimmed TORCH_TRACE log per rank
(`trimmed_<job>/*.log.gz`: graphs, compile ids, reasons, metrics and output code; no chromium
events) to commit as fixtures. The whole logs and live captures go to a temporary folder
(`--keep-raw`: OUT/raw). No network needed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ext"))

JOBS = ("agree", "diverge")
STEPS = 4
# What the trimmed fixture logs keep: enough for the rank report and the model tests.
KEEP = {
    "str", "dynamo_start", "dynamo_output_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "inductor_post_grad_graph", "recompile_reasons",
    "dynamo_graph_break_reason", "compilation_metrics", "bwd_compilation_metrics",
    "inductor_output_code", "dynamo_cpp_guards_str", "inductor_collective_schedule",
}  # fmt: skip
_PREFIX = re.compile(r"^[VIWEC]\d{4} [^\]]*\] ")


# --- the worker: one rank -------------------------------------------------------------------
def build_model(torch, vocab: int = 1024, width: int = 256, blocks: int = 2):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, 4, c // 4).unbind(2)
            att = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
            )
            x = x + self.proj(att.transpose(1, 2).reshape(b, t, c))
            return x + self.down(F.gelu(self.up(self.norm2(x))))

    class TinyGPT(nn.Module):
        """Defined here: Dynamo starts compiling at frames outside torch (DDP's is skipped)."""

        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.blocks = nn.ModuleList(Block() for _ in range(blocks))
            self.head = nn.Linear(width, vocab)

        def forward(self, tokens):
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    return TinyGPT()


def worker(out: Path, job: str, device_kind: str, backend: str) -> None:
    import compilescope
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    from torch.nn.parallel import DistributedDataParallel

    cuda = device_kind == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def timed_steps(step, tokens_of, steps: int) -> list[float]:
        times = []
        for i in range(steps):
            tokens = tokens_of(i)
            sync()
            start = time.perf_counter()
            step(tokens).float().pow(2).mean().backward()
            sync()
            times.append(time.perf_counter() - start)
        return times

    def tokens(i: int, seq: int = 64):
        if job == "diverge" and rank == 1 and i == STEPS - 1:
            seq = 96  # only rank 1, only its last step: a recompile the others do not have
        generator = torch.Generator().manual_seed(i)
        return torch.randint(0, 1024, (8, seq), generator=generator).to(device)

    figures: dict = {"rank": rank, "world_size": world, "device": str(device)}
    if cuda:
        figures["gpu"] = torch.cuda.get_device_name(device)
    with compilescope.capturing() as cap:
        torch.manual_seed(0)
        eager = DistributedDataParallel(build_model(torch).to(device), bucket_cap_mb=4)
        figures["ddp_eager_step_s"] = timed_steps(eager, lambda i: tokens(0), STEPS)
        torch.manual_seed(0)
        ddp = DistributedDataParallel(build_model(torch).to(device), bucket_cap_mb=4)
        compiled = torch.compile(ddp, backend=backend)
        figures["ddp_compiled_step_s"] = timed_steps(compiled, tokens, STEPS)

        from torch.distributed.fsdp import fully_shard

        torch.manual_seed(0)
        sharded = build_model(torch).to(device)
        for block in sharded.blocks:
            fully_shard(block)
        fully_shard(sharded)
        figures["fsdp2_compiled_step_s"] = timed_steps(
            torch.compile(sharded, backend=backend), lambda i: tokens(0), STEPS
        )

        weight = torch.randn(256, 128, device=device) / 16

        def row_parallel(x):  # each rank holds half the input features: sum the halves
            return funcol.all_reduce(x @ weight, "sum", dist.group.WORLD)

        parallel = torch.compile(row_parallel, backend=backend)
        result = parallel(torch.ones(8, 256, device=device))
        expected = (torch.ones(8, 256, device=device) @ weight) * world
        figures["row_parallel_matches"] = bool(torch.allclose(result, expected, rtol=1e-3))
    compilescope.write_rank(cap, out / f"live_{job}")
    (out / f"figures_{job}_rank{rank}.json").write_text(json.dumps(figures, indent=1))
    dist.destroy_process_group()


# --- the driver: both jobs, then the reports ----------------------------------------------
def run_job(out: Path, raw: Path, job: str, args) -> dict:
    env = {
        **os.environ,
        "TORCH_TRACE": str(raw / f"trace_{job}"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "ext"), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc-per-node", "2", __file__, str(raw), "--worker", job]
    command += ["--device", args.device, "--backend", args.backend]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.job_timeout
        )
        code, text = done.returncode, done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired as expired:  # keep what the ranks logged until then
        code = "timeout"
        text = f"{expired.stdout or ''}\n{expired.stderr or ''}"
    wall = time.perf_counter() - start
    (out / f"torchrun_{job}.log").write_text(text if isinstance(text, str) else str(text))
    return {"returncode": code, "wall_s": wall}


def trim(source: Path, target: Path, suffix: str = "gpu") -> None:
    """Keep the records named in KEEP (payloads unchanged, so their checksums hold), gzipped as
    `dedicated_log_torch_trace_rank_N_<suffix>.log.gz`."""
    import compilescope.trace.events as events

    target.mkdir(parents=True, exist_ok=True)
    for log in sorted(source.glob("*.log")):
        kept, keep = [], False
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("\t"):
                if keep:
                    kept.append(line)
                continue
            match = _PREFIX.match(line)
            try:
                name = events.event_name(json.loads(line[match.end() if match else 0 :]))
            except ValueError:
                name = None
            keep = name in KEEP
            if keep:
                kept.append(line)
        name = re.sub(r"rank_(\d+)_.*", rf"rank_\1_{suffix}.log.gz", log.name)
        with gzip.open(target / name, "wt", encoding="utf-8") as handle:
            handle.write("\n".join(kept) + "\n")


def summarize(out: Path, raw: Path, job: str, run: dict) -> dict:
    import compilescope

    trace = raw / f"trace_{job}"
    start = time.perf_counter()
    cap = compilescope.load_trace(trace)
    load_s = time.perf_counter() - start
    report = cap.compare_ranks(world_size=2)
    (out / f"ranks_{job}.txt").write_text(report.summary() + "\n")
    (out / f"ranks_{job}.json").write_text(json.dumps(report.to_dict(), indent=1))
    cli = subprocess.run(
        [sys.executable, "-m", "compilescope", "ranks", str(trace), "--world-size", "2"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "ext")},
        capture_output=True,
        text=True,
    )
    try:
        live = compilescope.merge_ranks(raw / f"live_{job}")
    except (OSError, ValueError):  # the job stopped before its ranks saved their captures
        live = None
    trim(trace, out / f"trimmed_{job}")
    splits = {
        str(c.id): [str(p) for p in c.ddp_split.parts] for c in cap if c.ddp_split is not None
    }
    collectives = {
        f"rank{r}:{c.compile_id}": [str(x) for x in c.collectives]
        for r, profile in report.profiles.items()
        for c in profile
        if c.collectives
    }
    ranks = {}
    for rank in (0, 1):
        path = raw / f"figures_{job}_rank{rank}.json"
        ranks[rank] = json.loads(path.read_text()) if path.exists() else {}
    log_bytes = sum(p.stat().st_size for p in trace.glob("*.log"))
    return {
        **run,
        "log_mb": log_bytes / 1e6,
        "load_trace_s": load_s,
        "compile_ids": {r: [c.compile_id for c in p] for r, p in report.profiles.items()},
        "diverged": report.diverged,
        "cli_exit": cli.returncode,
        "divergences": [str(d) for d in report.divergences],
        "aspects": {a: [list(g) for g in gs] for a, gs in report.aspect_groups.items()},
        "live_matches_log": live is not None and live.compile_ids == cap.compile_ids,
        "live_world_size": live.world_size if live is not None else None,
        "ddp_splits": splits,
        "collectives": collectives,
        "ranks": ranks,
        "compile_s": {str(c.id): c.compile_time_s for c in cap if c.compile_time_s},
    }


def median_ms(values: list[float]) -> str:
    if not values:
        return "-"
    # The first steps compile; the median of the rest is the steady step.
    rest = values[1:] if len(values) > 1 else values
    return f"{statistics.median(rest) * 1e3:.2f} ms (first {values[0]:.2f} s)"


def markdown(results: dict, args) -> str:
    import torch

    lines = [f"## Ranks on GPUs ({time.strftime('%Y-%m-%d')})", ""]
    first = next(iter(results.values()), {}).get("ranks", {}).get(0, {})
    lines.append(
        f"Machine: {first.get('gpu', args.device)} x2, torch {torch.__version__}, "
        f"Python {platform.python_version()}, backend {args.backend}, "
        f"{'NCCL' if args.device == 'cuda' else 'gloo'}."
    )
    lines.append(
        f"Command: `python benchmarks/recorders/gpu_ranks.py $OUT/ranks` ({STEPS} steps a model)."
    )
    for job, r in results.items():
        lines += ["", f"### Job `{job}`", ""]
        if "error" in r:
            lines.append(f"- torchrun exit {r['returncode']}, {r['wall_s']:.1f} s: {r['error']}")
            continue
        lines.append(
            f"- torchrun exit {r['returncode']}, {r['wall_s']:.1f} s; logs {r['log_mb']:.1f} MB, "
            f"load_trace {r['load_trace_s']:.2f} s; `compilescope ranks` exit {r['cli_exit']}"
        )
        lines.append(f"- diverged: {r['diverged']}; " + "; ".join(r["divergences"] or ["-"]))
        lines.append(f"- live captures merged = logs: {r['live_matches_log']}")
        for rank, figures in sorted(r["ranks"].items()):
            lines.append(
                f"- rank {rank}: DDP eager step {median_ms(figures.get('ddp_eager_step_s', []))}, "
                f"DDP compiled {median_ms(figures.get('ddp_compiled_step_s', []))}, FSDP2 compiled "
                f"{median_ms(figures.get('fsdp2_compiled_step_s', []))}; row-parallel all-reduce "
                f"correct: {figures.get('row_parallel_matches')}"
            )
        for cid, parts in sorted(r["ddp_splits"].items())[:2]:
            lines.append(f"- DDPOptimizer split of {cid}: " + " | ".join(parts))
        for cid, found in sorted(r["collectives"].items())[:4]:
            lines.append(f"- collectives in {cid}: " + ", ".join(found[:6]))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--worker", choices=JOBS)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS))
    parser.add_argument("--job-timeout", type=float, default=270, help="seconds per torchrun")
    parser.add_argument("--keep-raw", action="store_true", help="keep whole logs in OUT/raw")
    args = parser.parse_args()
    out = Path(args.out)
    if args.worker:
        worker(out, args.worker, args.device, args.backend)
        return
    out.mkdir(parents=True, exist_ok=True)
    # Whole logs and live captures stay out of OUT (tens of MB): OUT gets figures, reports and
    # the trimmed logs; --keep-raw keeps the rest in OUT/raw.
    raw = out / "raw" if args.keep_raw else Path(tempfile.mkdtemp(prefix="gpu_ranks_"))
    raw.mkdir(parents=True, exist_ok=True)
    results = {}
    for job in args.jobs:
        run = run_job(out, raw, job, args)
        try:
            results[job] = summarize(out, raw, job, run)
        except Exception as error:  # a job that failed early: say so, keep the other's figures
            results[job] = {**run, "error": f"{type(error).__name__}: {error}"}
        # Written after each job, so a run cut short still leaves the first job's figures.
        (out / "gpu_ranks.json").write_text(json.dumps(results, indent=1, default=str))
    text = markdown(results, args)
    (out / "gpu_ranks.md").write_text(text)
    print(text)
    expected = {"agree": 0, "diverge": 1}
    ok = all(
        r.get("returncode") == 0 and r.get("cli_exit") == expected[job]
        for job, r in results.items()
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
