"""The partition lab on a GPU (Inductor, Triton): re-partitioning reproduces each captured split,
and the budget sweep, on the CPU tests' three models at GPU sizes, in fp32 and bf16.

Run on the GPU machine from the repository root (torch 2.11 there):
    PYTHONPATH=ext:tests python3 benchmarks/gpu_partition_lab.py $OUT/partition_lab.json
Writes one JSON record per model and dtype, and prints a table for RESULTS.md.
"""

from __future__ import annotations

import json
import sys
import time

import compilescope
import torch
from workloads import ConvBN, MLPBlock

MODELS = {
    "mlp_block": (MLPBlock, (256, 32)),
    "transformer_layer": (
        lambda: torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True, dropout=0.0),
        (8, 128, 256),
    ),
    "conv_bn": (lambda: ConvBN(32), (16, 3, 64, 64)),
}


def run(name: str, dtype: torch.dtype) -> dict:
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().to("cuda", dtype)
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    start = time.perf_counter()
    cap = compilescope.capture(model, x, timings=False)
    captured_s = time.perf_counter() - start
    c = next(c for c in cap if c.partition is not None)
    again = c.repartition(c.partitioner, c.memory_budget)
    start = time.perf_counter()
    sweep = c.budget_sweep()
    sweep_s = time.perf_counter() - start
    return {
        "model": name,
        "dtype": str(dtype).removeprefix("torch."),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "compile_id": str(c.id),
        "partitioner": c.partitioner,
        "same_split": again.saved_names == c.partition.saved_names,
        "same_recomputed": again.recomputed == c.partition.recomputed,
        "saved": len(c.partition.saved),
        "activation_bytes": c.partition.activation_bytes,
        "saved_bytes": c.partition.saved_bytes,
        "recomputed_ops": c.partition.recomputed_ops,
        "capture_s": round(captured_s, 2),
        "sweep_s": round(sweep_s, 2),
        "sweep": sweep.points,
        "kernels": len(c.kernels),
    }


def main(out: str) -> None:
    records = [run(name, dtype) for name in MODELS for dtype in (torch.float32, torch.bfloat16)]
    with open(out, "w") as f:
        json.dump(records, f, indent=1)
    print("| model | dtype | split reproduced | saved | activations | saved bytes | recomputed ops "
          "| budget 0 activations | sweep s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        zero = r["sweep"][0]["activation_bytes"]
        print(
            f"| {r['model']} | {r['dtype']} | {r['same_split'] and r['same_recomputed']} "
            f"| {r['saved']} | {r['activation_bytes']} | {r['saved_bytes']} | {r['recomputed_ops']} "
            f"| {zero} | {r['sweep_s']} |"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "partition_lab.json")
