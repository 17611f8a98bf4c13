"""Speed findings on a GPU: is the cause named in the top 3, and does its remedy make the step faster (issue 31).

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-speed-zoo --out OUT [--loops a,b] [--pairs 3]
        [--deadline SECONDS]

Each loop is a training loop with one well-known cause of a slow step and the remedy a
performance guide gives for it. For each pair, two fresh processes run one after the other (the
order alternates from pair to pair): the loop as written ("base") and with the remedy ("fix"),
each under `compilescope.capturing()`. A process records compilescope's real-step figures
(compiled median per step, the split, the eager optimizer's time), its top findings, and a
stopwatch of its own (CUDA events over 20 more steps after the capture). The speedup of a pair
is base / fix of the compiled medians; the loop's figure is the median over pairs with its
range. Writes OUT/speed_zoo.json after every process, so a run cut short keeps what it measured.

Loops (cause -> remedy):
  lm_fp32      a GPT-2 trained in fp32, TF32 off       -> torch.set_float32_matmul_precision("high")
  cnn_launch   a ResNet-style CNN, small batch (launch-bound) -> torch.compile(mode="reduce-overhead")
  mlp_eager_opt a 48-layer MLP, per-parameter Adam     -> torch.optim.Adam(fused=True)
  lm_item_sync a small GPT-2 logging loss and grad norm with .item() every step, mid-step
                                                       -> keep them on the GPU, read every 50 steps
  cnn_nchw     a ResNet-style CNN, batch 32 at 128 px, NCHW -> channels_last (model and input)
  lm_grad_sync a GPT-2 (4 x 512, bf16) logging every parameter's gradient norm with .item()
               each step                             -> one foreach norm on the GPU, read every
                                                        50 steps
  lm_break     a GPT-2 (2 x 256, bf16) whose loss logs a warning once: a graph break splits the
               forward and the backward              -> the fix compilescope names:
                                                        ignore_logging_functions
  mlp_gemm     a bf16 transformer MLP stack (8 x 1024 -> 4096 -> 1024, GELU), fused AdamW:
               library matmuls take most of the step -> max-autotune for matmuls
                                                        (`max_autotune_gemm`); its compile time
                                                        is measured with cold caches

An eager fused optimizer, whose only fix compilescope names is compiling the step (run after
the held-out loops, to learn whether that fix helps; base: the optimizer fused and eager):
  lm_fused_opt    a GPT-2 (4 x 512, bf16), AdamW(fused=True) -> torch.compile(opt.step)
  lm_foreach_opt  the same                        -> AdamW(foreach=True), torch.compile(opt.step)
                                                     (the compiled-optimizer tutorial's way)
  resnet18_fused_opt a torchvision ResNet-18, batch 16 at 64 px, SGD(momentum, fused=True)
                                                  -> torch.compile(opt.step)
A second family for what a break's fix saves (GPT-2's logging break was the only one measured):
  cnn_break    a torchvision ResNet-18, batch 32 at 128 px, SGD, whose forward logs the features'
               shape (`log.debug`) after layer2: a graph break splits it
                                                  -> the fix compilescope names:
                                                     ignore_logging_functions
The held-out ResNet-18's first finding, launch-bound, with its own remedy (run 7 tried the
second finding's):
  resnet18_launch a torchvision ResNet-18, batch 16 at 64 px, SGD(momentum, fused=True)
                                                  -> mode="reduce-overhead"
cuDNN's auto-tuner (the second blind round's conv net was the only one measured):
  resnet50_cudnn a torchvision ResNet-50, batch 32 at 160 px, fp32, fused SGD, with
               `torch.backends.cudnn.benchmark` off    -> cudnn.benchmark = True
A second family for max-autotune (the MLP stack was the only one measured):
  lm_gemm      a GPT-2 (4 x 768, bf16), batch 16 x 512, fused AdamW -> max_autotune_gemm

Held out (written after the findings were final, run as they are, nothing tuned to them):
  vit_fp32     a timm ViT-S/16 trained in fp32 at batch 32 -> set_float32_matmul_precision("high")
  resnet18_sgd a torchvision ResNet-18, batch 16 at 64 px, SGD momentum foreach=False
                                                       -> SGD(fused=True)
  llama_launch a 2-layer Llama (width 256, bf16), batch 2 x 64 -> mode="reduce-overhead"

--cold-caches gives every process its own empty Inductor and Triton cache directories, so that
compile times are those of a first compile (max-autotune's cost is mostly benchmarking, which
the autotune cache would otherwise skip on later processes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = 40  # capturing(): 2 settling + 10 timed + 10 split + 1 + 5 eager, and some to spare
EXPECTED = {  # the finding kind that names the cause, and the remedy's words in its fixes
    "lm_fp32": ("fp32_matmul", "set_float32_matmul_precision"),
    "cnn_launch": ("launch_bound", "CUDA graphs"),
    "mlp_eager_opt": ("eager_optimizer", "fused"),
    "lm_item_sync": ("host_sync", "every N steps"),
    "cnn_nchw": ("channels_last", "channels_last"),
    "lm_grad_sync": ("host_sync", "every N steps"),
    "lm_break": ("graph_break", "ignore_logging_functions"),
    "mlp_gemm": ("library_matmul", "max_autotune_gemm"),
    "vit_fp32": ("fp32_matmul", "set_float32_matmul_precision"),
    "resnet18_sgd": ("eager_optimizer", "fused"),
    "llama_launch": ("launch_bound", "CUDA graphs"),
    "lm_fused_opt": ("eager_optimizer", "torch.compile(opt.step)"),
    "lm_foreach_opt": ("eager_optimizer", "torch.compile(opt.step)"),
    "resnet18_fused_opt": ("eager_optimizer", "torch.compile(opt.step)"),
    "lm_gemm": ("library_matmul", "max_autotune_gemm"),
    "cnn_break": ("graph_break", "ignore_logging_functions"),
    "resnet18_launch": ("launch_bound", "CUDA graphs"),
    "resnet50_cudnn": ("cudnn_benchmark", "cudnn.benchmark"),
}


def build(loop: str, arm: str):
    """(step function, model) for one loop and arm ("base" or "fix"), on the GPU."""
    import torch
    from models import gpt2 as _gpt2
    from models import resnet18_sgd as _resnet18_sgd

    torch.manual_seed(0)
    dev = "cuda"
    if loop == "lm_fp32":
        from transformers import GPT2Config, GPT2LMHeadModel

        if arm == "fix":
            torch.set_float32_matmul_precision("high")
        model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=768, n_head=12, n_positions=512))
        model = model.to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 50257, (8, 512), device=dev)
        compiled = torch.compile(model)

        def step():
            compiled(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "cnn_launch":
        from models import build as build_model

        model, inputs, loss_fn = build_model("resnet", "small", dev)
        x, y = (t[:4].contiguous() for t in inputs)  # a small batch: many short kernels
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        compiled = torch.compile(model, mode="reduce-overhead" if arm == "fix" else None)

        def step():
            loss_fn(compiled, x, y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "mlp_eager_opt":
        layers = [torch.nn.Linear(512, 512) for _ in range(48)]
        model = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.ReLU())])
        model = model.to(dev)
        if arm == "fix":
            opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)
        else:
            opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
        x = torch.randn(64, 512, device=dev)
        compiled = torch.compile(model)

        def step():
            compiled(x).pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "lm_item_sync":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=128))
        model = model.to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 50257, (8, 128), device=dev)
        compiled = torch.compile(model)
        log: list = []

        def step():
            loss = compiled(input_ids=ids, labels=ids).loss
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if arm == "fix":  # on the GPU; read every 50 steps
                log.append(torch.stack([loss.detach(), norm]))
                if len(log) == 50:
                    print(torch.stack(log).mean(0).tolist())
                    log.clear()
            else:  # two Python floats per step: the CPU waits for the GPU twice
                log.append((loss.item(), norm.item()))
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "cnn_nchw":
        from models import build as build_model

        model, inputs, loss_fn = build_model("resnet", "full", dev)
        x, y = inputs
        if arm == "fix":
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        compiled = torch.compile(model)

        def step():
            loss_fn(compiled, x, y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "lm_grad_sync":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=512, n_head=8, n_positions=256))
        model = model.to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 50257, (8, 256), device=dev)
        compiled = torch.compile(model)
        params = [p for p in model.parameters() if p.requires_grad]
        stats: list = []

        def step():
            compiled(input_ids=ids, labels=ids).loss.backward()
            if arm == "fix":  # every norm in one foreach kernel, kept on the GPU
                stats.append(torch.stack(torch._foreach_norm([p.grad for p in params])))
                if len(stats) == 50:
                    print(torch.stack(stats).mean(0)[:3].tolist())
                    stats.clear()
            else:  # a per-layer gradient-norm log: one sync per parameter tensor
                stats.append([p.grad.norm().item() for p in params])
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "lm_break":
        from transformers import GPT2Config, GPT2LMHeadModel

        if arm == "fix":  # the fix compilescope's break finding names (torch's hint GB0291)
            import torch._dynamo.config
            import transformers.modeling_utils

            torch._dynamo.config.ignore_logging_functions.add(
                transformers.modeling_utils.logger.warning_once
            )
        model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=128))
        model = model.to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 50257, (8, 128), device=dev)
        compiled = torch.compile(model)

        def step():
            compiled(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "mlp_gemm":
        if arm == "fix":
            import torch._inductor.config

            torch._inductor.config.max_autotune_gemm = True
        blocks = [
            torch.nn.Sequential(
                torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
            )
            for _ in range(8)
        ]
        model = torch.nn.Sequential(*blocks).to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        x = torch.randn(8192, 1024, device=dev, dtype=torch.bfloat16)
        compiled = torch.compile(model)

        def step():
            compiled(x).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "vit_fp32":
        import timm

        if arm == "fix":
            torch.set_float32_matmul_precision("high")
        model = timm.create_model("vit_small_patch16_224", pretrained=False).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        x = torch.randn(32, 3, 224, 224, device=dev)
        y = torch.randint(0, 1000, (32,), device=dev)
        compiled = torch.compile(model)

        def step():
            torch.nn.functional.cross_entropy(compiled(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop in ("resnet18_sgd", "resnet18_launch"):
        if loop == "resnet18_sgd":  # the remedy: a fused optimizer
            flags = {"fused": True} if arm == "fix" else {"foreach": False}
        else:  # the remedy: CUDA graphs, the optimizer fused in both arms
            flags = {"fused": True}
        model, opt, x, y = _resnet18_sgd(dev, **flags)
        graphs = loop == "resnet18_launch" and arm == "fix"
        compiled = torch.compile(model, mode="reduce-overhead" if graphs else None)

        def step():
            torch.nn.functional.cross_entropy(compiled(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "resnet50_cudnn":
        import torchvision

        torch.backends.cudnn.benchmark = arm == "fix"  # off is torch's default
        model = torchvision.models.resnet50(num_classes=100).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
        x = torch.randn(32, 3, 160, 160, device=dev)
        y = torch.randint(0, 100, (32,), device=dev)
        compiled = torch.compile(model)

        def step():
            torch.nn.functional.cross_entropy(compiled(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "llama_launch":
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            hidden_size=256, intermediate_size=688, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=32000,
            max_position_embeddings=64,
        )  # fmt: skip
        model = LlamaForCausalLM(config).to(dev, dtype=torch.bfloat16)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 32000, (2, 64), device=dev)
        compiled = torch.compile(model, mode="reduce-overhead" if arm == "fix" else None)

        def step():
            compiled(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop in ("lm_fused_opt", "lm_foreach_opt", "resnet18_fused_opt"):
        if loop == "resnet18_fused_opt":
            model, opt, x, y = _resnet18_sgd(dev, fused=True)
            compiled = torch.compile(model)

            def loss():
                return torch.nn.functional.cross_entropy(compiled(x), y)

        else:
            model = _gpt2(4, 512, 256, dev)
            foreach = loop == "lm_foreach_opt" and arm == "fix"
            flags = {"foreach": True} if foreach else {"fused": True}
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **flags)
            ids = torch.randint(0, 50257, (8, 256), device=dev)
            compiled = torch.compile(model)

            def loss():
                return compiled(input_ids=ids, labels=ids).loss

        opt_step = torch.compile(opt.step) if arm == "fix" else opt.step

        def step():
            loss().backward()
            opt_step()
            opt.zero_grad(set_to_none=True)

    elif loop == "cnn_break":
        import logging

        import torchvision

        log = logging.getLogger("train")  # level WARNING: the debug line prints nothing
        if arm == "fix":  # what compilescope's break finding names for this call
            import torch._dynamo.config

            torch._dynamo.config.ignore_logging_functions.add(log.debug)

        class Logged(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.net = torchvision.models.resnet18(num_classes=10)

            def forward(self, x):
                n = self.net
                h = n.layer2(n.layer1(n.maxpool(n.relu(n.bn1(n.conv1(x))))))
                log.debug("features %s", tuple(h.shape))
                h = n.avgpool(n.layer4(n.layer3(h)))
                return n.fc(torch.flatten(h, 1))

        model = Logged().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
        x = torch.randn(32, 3, 128, 128, device=dev)
        y = torch.randint(0, 10, (32,), device=dev)
        compiled = torch.compile(model)

        def step():
            torch.nn.functional.cross_entropy(compiled(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    elif loop == "lm_gemm":
        if arm == "fix":
            import torch._inductor.config

            torch._inductor.config.max_autotune_gemm = True
        model = _gpt2(4, 768, 512, dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 50257, (16, 512), device=dev)
        compiled = torch.compile(model)

        def step():
            compiled(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    else:
        raise SystemExit(f"unknown loop {loop!r}")
    return step


def _timed(step, steps: int) -> list[float]:
    import torch

    marks = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    for i in range(steps):
        marks[i].record()
        step()
    marks[steps].record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) / 1e3 for a, b in zip(marks, marks[1:], strict=False)]


def control(loop: str, out: Path, arm: str = "base") -> None:
    """The loop without compilescope: the steps compilescope would time (3-12), the rest run
    plainly, then the same 20 steps after as the captured runs (after/before)."""
    import torch

    step = build(loop, arm)
    for _ in range(2):
        step()
    before = _timed(step, 10)
    for _ in range(STEPS - 12):
        step()
    after = _timed(step, 20)
    record = {
        "loop": loop,
        "arm": "control" if arm == "base" else f"control_{arm}",
        "before_s": statistics.median(before),
        "stopwatch_s": statistics.median(after),
        "device": torch.cuda.get_device_name(),
    }
    out.write_text(json.dumps(record, indent=1))


def worker(loop: str, arm: str, out: Path) -> None:
    import compilescope
    import torch
    from compilescope.model.compile import compile_seconds

    if arm.startswith("control"):  # control: the loop as written; control_fix: with the remedy
        control(loop, out, arm.partition("_")[2] or "base")
        return
    step = build(loop, arm)
    started = time.perf_counter()
    with compilescope.capturing() as cap:
        for _ in range(STEPS):
            step()
    took = time.perf_counter() - started
    real = cap.timings.real_steps
    found = compilescope.findings(cap.capture)
    # The user's own stopwatch over 20 more steps (CUDA events), as a check on compilescope and
    # on what the window leaves behind (after/before: compilescope's compiled steps came first).
    walls = _timed(step, 20)
    record = {
        "loop": loop,
        "arm": arm,
        "capture_s": took,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "compiled_s": real.compiled.median_s if real else None,
        "step_walls": list(real.step_walls) if real else [],
        "eager_s": real.eager.median_s if real and real.eager else None,
        "busy_s": real.busy_s if real else None,
        "graphs_s": real.graphs_s if real else None,
        "outside_s": real.outside_graphs_s if real else None,
        "between_s": real.between_s if real else None,
        "optimizer_s": real.optimizer_s if real else None,
        "syncs_per_step": real.syncs_per_step if real else None,
        "scalar_reads_per_step": real.scalar_reads_per_step if real else None,
        "sync_idle_s": real.sync_idle_s if real else None,
        "note": (real.note if real else cap.timings.real_steps_note),
        "stopwatch_s": statistics.median(walls),
        # Every compile's time in this process (cold caches with --cold-caches).
        "compile_total_s": compile_seconds(cap.capture),
        "compiles": [
            {
                "id": str(c.id),
                "frame_s": c.compile_time_s,
                "stages_s": sum(s.duration_us for s in c.stage_times if s.depth == 0) / 1e6,
            }
            for c in cap.capture
        ],  # fmt: skip
        "break_s": next(
            (f.cost.step_s for f in found if f.kind == "graph_break" and f.cost.step_s), None
        ),
        "findings": [
            {
                "kind": f.kind,
                "what": f.what,
                "step_s": f.cost.step_s,
                "share": f.cost.share,
                "fixes": [fx.title + ": " + (fx.python() or fx.change) for fx in f.fixes],
            }
            for f in found[:5]
        ],
    }
    out.write_text(json.dumps(record, indent=1))


def named_at(record: dict, loop: str) -> int | None:
    """The rank (1-based) of the finding that names the loop's cause and remedy, in the top 3."""
    kind, words = EXPECTED[loop]
    for i, f in enumerate(record["findings"][:3], 1):
        if f["kind"] == kind and any(words in fix for fix in f["fixes"]):
            return i
    return None


def summarise(runs: list[dict]) -> dict:
    out: dict[str, dict] = {}
    controls = {(r["loop"], r["arm"]) for r in runs if r["arm"].startswith("control")}
    for loop, control_arm in sorted(controls):
        # after/before: the captured runs (compiled median in the window vs the stopwatch after
        # it) against the control runs (the same steps without compilescope), arm by arm:
        # "control" is the loop as written ("base"), "control_fix" with the remedy ("fix").
        arm = control_arm.partition("_")[2] or "base"
        cap = [r["stopwatch_s"] / r["compiled_s"] for r in runs
               if r["loop"] == loop and r["arm"] == arm and r["compiled_s"]]  # fmt: skip
        ctl = [r["stopwatch_s"] / r["before_s"] for r in runs
               if r["loop"] == loop and r["arm"] == control_arm]  # fmt: skip
        name = f"{loop}/after_before" + ("" if arm == "base" else f"_{arm}")
        out[name] = {
            "captured": cap,
            "control": ctl,
            "captured_median": statistics.median(cap) if cap else None,
            "control_median": statistics.median(ctl) if ctl else None,
        }
    for loop in dict.fromkeys(r["loop"] for r in runs if r["arm"] in ("base", "fix")):
        pairs, compile_pairs = [], []
        base = [r for r in runs if r["loop"] == loop and r["arm"] == "base"]
        fix = [r for r in runs if r["loop"] == loop and r["arm"] == "fix"]
        for b, f in zip(base, fix, strict=False):
            if b["compiled_s"] and f["compiled_s"]:
                pairs.append(
                    {
                        "speedup": b["compiled_s"] / f["compiled_s"],
                        "stopwatch_speedup": b["stopwatch_s"] / f["stopwatch_s"],
                    }
                )
                if b.get("compile_total_s") and f.get("compile_total_s"):
                    compile_pairs.append(f["compile_total_s"] - b["compile_total_s"])
        ratios = [p["speedup"] for p in pairs]
        out[loop] = {
            "pairs": len(pairs),
            "speedup_median": statistics.median(ratios) if ratios else None,
            "speedup_range": [min(ratios), max(ratios)] if ratios else None,
            "stopwatch_speedup_median": statistics.median([p["stopwatch_speedup"] for p in pairs])
            if pairs
            else None,
            "named_at": [named_at(r, loop) for r in base],
            # What the fix adds to compiling (s, fix - base, per pair), and a break's cost.
            "compile_extra_s": compile_pairs,
            "break_s": [r.get("break_s") for r in base],
            "fix_break_s": [r.get("break_s") for r in fix],
            "fix_still_named_at": [named_at(r, loop) for r in fix],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--loops", default=",".join(EXPECTED))
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=540.0)
    parser.add_argument("--worker", nargs=3, metavar=("LOOP", "ARM", "FILE"))
    parser.add_argument("--cold-caches", action="store_true",
                        help="each process compiles with empty Inductor and Triton caches")  # fmt: skip
    parser.add_argument(
        "--arms",
        default="base,fix",
        help="base,fix: the remedy; base,control (or fix,control_fix): after/before",
    )
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], Path(args.worker[2]))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp())  # one file per process; only the summary goes to OUT
    start, runs, errors = time.time(), [], []
    for pair in range(args.pairs):
        for loop in args.loops.split(","):
            first, second = args.arms.split(",")
            arms = (first, second) if pair % 2 == 0 else (second, first)
            for arm in arms:
                if time.time() - start > args.deadline:
                    break
                file = scratch / f"{loop}_{arm}_{pair}.json"
                env_cmd = [
                    sys.executable,
                    __file__,
                    str(args.out),
                    "--worker",
                    loop,
                    arm,
                    str(file),
                ]
                env = dict(os.environ)
                if args.cold_caches:
                    env["TORCHINDUCTOR_CACHE_DIR"] = str(scratch / f"{file.stem}_inductor")
                    env["TRITON_CACHE_DIR"] = str(scratch / f"{file.stem}_triton")
                done = subprocess.run(env_cmd, capture_output=True, text=True, cwd=ROOT, env=env)
                if done.returncode != 0 or not file.exists():
                    errors.append(f"== {loop} {arm} {pair}\n{done.stderr[-8000:]}")
                    (args.out / "errors.txt").write_text("\n".join(errors))
                    continue
                runs.append(json.loads(file.read_text()))
                summary = {"runs": runs, "summary": summarise(runs)}
                (args.out / "speed_zoo.json").write_text(json.dumps(summary, indent=1))
                print(loop, arm, pair, f"{runs[-1]['stopwatch_s']}", flush=True)
    print(json.dumps(summarise(runs), indent=1))


SUITE = {
    "name": "gpu-speed-zoo",
    "device": "GPU",
    "measures": "loops with one known cause of slowness each: is the cause named in the top 3, "
    "and what its remedy gives on compilescope's steps and the user's stopwatch",
}
# Triton and Python are the runs' reports' (RESULTS.md of 87f12c2, "Speed zoo" and "After/before
# a profiled window"), where they give them; the date is the report's, or the record's commit
# date where the report gives two days.
_H100 = {"triton": "3.6.0", "python": "3.12"}  # runs 1-7: "same H100 and versions"
_H200 = {"triton": "3.6"}  # runs 8-11: Python not given
RECORDED = [
    ("raw/gpu_speed_zoo_h100_run2.json", {**_H100, "date": "2026-11-25"}, ""),
    ("raw/gpu_speed_zoo_h100_run3.json", {**_H100, "date": "2026-11-25"}, ""),
    ("raw/gpu_speed_zoo_h100_run5_sync_break.json", {**_H100, "date": "2026-11-25"}, ""),
    ("raw/gpu_speed_zoo_h100_run6_autotune.json", {**_H100, "date": "2026-11-25"}, "--cold-caches"),
    ("raw/gpu_speed_zoo_h100_run7_held_out.json", {**_H100, "date": "2026-11-25"}, ""),
    ("raw/gpu_speed_zoo_h200_run8_fused_opt.json", {**_H200, "date": "2026-11-26"}, ""),
    ("raw/gpu_speed_zoo_h200_run9_lm_gemm.json", {**_H200, "date": "2026-11-26"}, "--cold-caches"),
    ("raw/gpu_speed_zoo_h200_run10_cnn_break.json", {**_H200, "date": "2026-11-26"}, ""),
    ("raw/gpu_speed_zoo_h200_run11_resnet18_launch.json", {**_H200, "date": "2026-11-26"}, ""),
    # The after/before runs' reports give the card and torch only (runs 4: "same H100 and
    # versions" as runs 5-7).
    ("raw/gpu_after_before_h100_run3.json", {"date": "2026-11-25"}, "--arms base,control"),
    ("raw/gpu_after_before_h100_run4_cudagraphs.json", {**_H100, "date": "2026-11-25"}, "--arms fix,control_fix"),
    ("raw/gpu_after_before_h200_run5_cnn.json", {"date": "2026-11-26"}, "--arms base,control"),
]  # fmt: skip


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    """Rows of one OUT/speed_zoo.json: per loop, the pairs' speedups and where its cause was
    named; per control arm, the steps after the window against those before."""
    import rows

    runs = json.loads(path.read_text())["runs"]
    first = runs[0] if runs else {}
    given = {"machine": first.get("device"), "torch": first.get("torch"), **prov}
    given = {k: prov.get(k) or given.get(k) for k in rows.PROVENANCE}
    summary = summarise(runs)
    loops_run = ",".join(dict.fromkeys(r["loop"] for r in runs))
    pairs = max([s.get("pairs", 0) for s in summary.values()] + [len(s.get("control", [])) for s in summary.values()])  # fmt: skip
    cmd = rows.command(SUITE["name"], ["--loops", loops_run, "--pairs", str(pairs), *args.split()])
    out = []

    def add(case, metric, values, unit):
        values = rows.spread(values) if isinstance(values, list) else {"median": values}
        if values["median"] is not None:
            out.append(rows.row(SUITE["name"], case, metric, values.pop("median"), unit=unit,
                                prov=given, cmd=cmd, **values))  # fmt: skip

    for loop, s in summary.items():
        if "/after_before" in loop:
            add(loop.replace("/after_before", ""), "captured: stopwatch after / window's step", s["captured"], "ratio")  # fmt: skip
            add(loop.replace("/after_before", ""), "control: after / before", s["control"], "ratio")
            continue
        base = [r for r in runs if r["loop"] == loop and r["arm"] == "base"]
        fix = [r for r in runs if r["loop"] == loop and r["arm"] == "fix"]
        both = [(b, f) for b, f in zip(base, fix, strict=False) if b["compiled_s"] and f["compiled_s"]]  # fmt: skip
        add(loop, "speedup, compilescope's steps", [b["compiled_s"] / f["compiled_s"] for b, f in both], "x")  # fmt: skip
        add(loop, "speedup, stopwatch", [b["stopwatch_s"] / f["stopwatch_s"] for b, f in both], "x")  # fmt: skip
        named = [f"#{n}" if n else "-" for n in s["named_at"]]
        if named:
            add(
                loop, "cause named at, base runs", f"{EXPECTED[loop][0]} {', '.join(named)}", "text"
            )
        if s["compile_extra_s"]:
            add(loop, "compile time the fix adds", s["compile_extra_s"], "s")
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [str(out), *args])
    return convert(out / "speed_zoo.json", rows.here(gpu=True), " ".join(args))


if __name__ == "__main__":
    main()
