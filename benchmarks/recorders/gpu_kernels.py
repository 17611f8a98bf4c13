"""GPU check of the Triton reference kernels: correct first, then timed against Inductor's kernels.

    python benchmarks/recorders/gpu_kernels.py OUTDIR

For each kernel and shape: the relative error of our kernel and of `torch.compile(reference)`
against the reference in float64, then both timed with `triton.testing.do_bench` (median and
20th/80th percentiles, L2 flushed between runs), eager PyTorch alongside. Then the softmax as a
torch custom op inside a compiled model (triton_op and opaque custom_op) against the same model
written with torch.softmax. Prints markdown tables (for benchmarks/RESULTS.md) and writes them to
OUTDIR/gpu_kernels.md, raw numbers to OUTDIR/gpu_kernels.json and Inductor's output code for the
custom-op models to OUTDIR/*.py. Exits non-zero if a check fails.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import triton
from torch._inductor.utils import run_and_get_code
from triton.testing import do_bench

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "kernels"))
from compilescope_kernels import layer_norm as ln  # noqa: E402
from compilescope_kernels import matmul as mm  # noqa: E402
from compilescope_kernels import ops  # noqa: E402
from compilescope_kernels import softmax as sm  # noqa: E402

OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)
DEV = "cuda"
# Relative error (‖out − ref‖ / ‖ref‖ against float64) that each storage type must stay under:
# fp32 arithmetic lands far below 1e-5; fp16 and bf16 outputs carry their rounding (2^-11, 2^-8).
MAX_REL_ERR = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
# The gradient of sum(y^2) through softmax subtracts nearly equal terms: eager fp32 PyTorch lands
# near 3e-4 on the model below. A compiled gradient must stay within 3x eager fp32's own error.
GRAD_ERR_OVER_EAGER = 3.0
DT = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
START = time.time()
# Sizes that fill the chip and take tens of microseconds or more, so launch overheads stay
# small; non-powers of two on purpose (edge masks). Rows of 30000 need Inductor's looped kernel.
ROWS = [
    ((32768, 1000), torch.float32),
    ((16384, 4096), torch.float16),
    ((4096, 30000), torch.bfloat16),
]
MATMULS = [((4096, 4096, 4096), torch.float16), ((3000, 5000, 2000), torch.bfloat16),
           ((2048, 2048, 2048), torch.float32)]  # fmt: skip
OP_SHAPE = (16384, 1024)
failures: list[str] = []
rows: list[dict] = []
op_rows: list[dict] = []
op_notes: list[str] = []


def rel_err(out: torch.Tensor, ref64: torch.Tensor) -> float:
    if torch.isnan(out).any():  # also catches elements never written (the output was poisoned)
        return float("nan")
    return ((out.double() - ref64).norm() / ref64.norm()).item()


def poisoned_call(fn: Callable, args: tuple, out_shape: tuple) -> torch.Tensor:
    """Run fn after freeing a NaN block of the output's size: the caching allocator hands that
    block to the output, so an element the kernel never writes stays NaN."""
    poison = torch.full(out_shape, float("nan"), device=DEV, dtype=args[0].dtype)
    del poison
    out = fn(*args)
    torch.cuda.synchronize()
    return out


def bench(fn: Callable, args: tuple) -> list[float]:
    """[p20, median, p80] in microseconds; do_bench flushes L2 before each run."""
    return [
        q * 1000 for q in do_bench(lambda: fn(*args), warmup=25, rep=200, quantiles=[0.2, 0.5, 0.8])
    ]


def inductor_kernels(code: list[str]) -> list[str]:
    """Kernel names in Inductor's output code: generated Triton kernels and extern calls."""
    text = "\n".join(code)
    names = re.findall(r"^(\w+) = async_compile\.\w+\(", text, re.M)
    names += [f"extern_kernels.{n}" for n in re.findall(r"extern_kernels\.(\w+)\(", text)]
    names += re.findall(r"(torch\.ops\.compilescope\.\w+)", text)
    return sorted(set(names))


def fmt_t(t: list[float]) -> str:
    return f"{t[1]:.1f} [{t[0]:.1f}–{t[2]:.1f}]"


def case(name, shape, dtype, fn, ref, args, out_shape, work, unit, options=None, label=None):
    """Check and time our kernel and torch.compile(ref) on `args`; record a table row."""
    torch._dynamo.reset()
    ref64 = ref(*[a.double() for a in args])
    row = {"op": label or name, "shape": shape, "dtype": DT[dtype]}
    try:
        ours = poisoned_call(fn, args, out_shape)
        row["err_ours"] = rel_err(ours, ref64)
        compiled = torch.compile(ref, dynamic=False, options=options)
        _, code = run_and_get_code(compiled, *args)
        ind = poisoned_call(compiled, args, out_shape)
        row["err_inductor"] = rel_err(ind, ref64)
        row["inductor_kernels"] = inductor_kernels(code)
        row["t_ours"], row["t_inductor"] = bench(fn, args), bench(compiled, args)
        row["t_eager"] = bench(ref, args)
        row["tp_ours"], row["tp_inductor"] = work / row["t_ours"][1], work / row["t_inductor"][1]
        row["unit"] = unit
        for who in ("ours", "inductor"):
            if not row[f"err_{who}"] < MAX_REL_ERR[dtype]:  # NaN fails too
                failures.append(
                    f"{row['op']} {shape} {DT[dtype]}: {who} rel err {row[f'err_{who}']}"
                )
    except Exception as e:  # one failing case must not lose the others' figures
        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        failures.append(f"{row['op']} {shape} {DT[dtype]}: {row['error']}")
    rows.append(row)
    print(json.dumps(row), flush=True)
    write_report()


def rand(*shape, dtype, scale=1.0):
    return (torch.randn(*shape, device=DEV) * scale).to(dtype)


def run_kernels() -> None:
    for (m, n), dtype in ROWS:
        x = rand(m, n, dtype=dtype, scale=3)
        gb = 2 * x.numel() * x.element_size() / 1e3  # bytes / us -> GB/s
        case(
            "softmax", f"{m}x{n}", dtype, sm.softmax, sm.reference_softmax, (x,), (m, n), gb, "GB/s"
        )
    for (m, n), dtype in ROWS:
        args = (rand(m, n, dtype=dtype, scale=2), rand(n, dtype=dtype), rand(n, dtype=dtype))
        gb = (2 * m * n + 2 * n) * args[0].element_size() / 1e3
        case("layer_norm", f"{m}x{n}", dtype, ln.layer_norm, ln.reference_layer_norm, args, (m, n), gb, "GB/s")  # fmt: skip
    for (m, k, n), dtype in MATMULS:
        args = (rand(m, k, dtype=dtype), rand(k, n, dtype=dtype))
        tf = 2 * m * n * k / 1e6  # flop / us -> TFLOP/s
        case("matmul", f"{m}x{k}x{n}", dtype, mm.matmul, mm.reference_matmul, args, (m, n), tf, "TFLOP/s")  # fmt: skip
    # By default Inductor hands a matmul to cuBLAS (extern_kernels.mm); with max-autotune limited
    # to Triton it generates and tunes its own Triton matmul template: a like-for-like comparison.
    autotune = {"max_autotune": True, "max_autotune_gemm_backends": "TRITON"}
    for (m, k, n), dtype in MATMULS[:2]:
        if time.time() - START > 250:  # keep inside the run's time limit
            print(f"skipped max-autotune {m}x{k}x{n}: time", flush=True)
            continue
        args = (rand(m, k, dtype=dtype), rand(k, n, dtype=dtype))
        tf = 2 * m * n * k / 1e6
        case("matmul", f"{m}x{k}x{n}", dtype, mm.matmul, mm.reference_matmul, args, (m, n), tf,
             "TFLOP/s", options=autotune, label="matmul (max-autotune, Triton only)")  # fmt: skip


def last_dim(op: Callable) -> Callable:
    """torch.softmax's signature for an op that always works on the last dimension."""
    return lambda x, dim: op(x)


def grad_of_model(x: torch.Tensor, softmax: Callable = torch.softmax) -> torch.Tensor:
    x = x.detach().requires_grad_()
    return torch.autograd.grad(((softmax(x * 0.125, dim=-1) * 2 + 1) ** 2).sum(), x)[0]


def run_custom_ops() -> None:
    """The softmax as a custom op inside a compiled model: what Inductor builds around it."""
    m, n = OP_SHAPE
    x = torch.randn(m, n, device=DEV)
    launcher_t = bench(sm.softmax, (x,))  # our launcher called directly, for the eager column
    op_notes.append(f"our launcher `softmax(x)` called directly: {fmt_t(launcher_t)} us")
    variants = {
        "torch.softmax (Inductor fuses it)": lambda: torch.softmax,
        "triton_op (compilescope::softmax)": lambda: last_dim(ops.softmax_op("triton_op")),
        "custom_op (compilescope::softmax_opaque)": lambda: last_dim(ops.softmax_op("custom_op")),
    }
    for label, make in variants.items():
        torch._dynamo.reset()
        row = {"model": label}
        try:
            softmax = make()  # registered here, outside the compiled code

            def model(x, softmax=softmax):
                return softmax(x * 0.125, dim=-1) * 2 + 1

            x = torch.randn(m, n, device=DEV)  # fresh inputs for each check
            ref = torch.softmax(x.double() * 0.125, -1) * 2 + 1
            g_ref = grad_of_model(x.double())
            row["err_grad_eager_fp32"] = rel_err(grad_of_model(x), g_ref)
            compiled = torch.compile(model, fullgraph=True)

            def step(xg, compiled=compiled):  # backward inside, so its code is captured too
                y = compiled(xg)
                return y.detach(), torch.autograd.grad((y**2).sum(), xg)[0]

            (y, g), code = run_and_get_code(step, x.clone().requires_grad_())
            row["err_fwd"], row["err_grad"] = rel_err(y, ref), rel_err(g, g_ref)
            row["inductor_kernels"] = inductor_kernels(code)
            row["uses_softmax_kernel"] = "softmax_kernel" in "\n".join(code)
            row["t"] = bench(compiled, (x,))
            row["t_op_eager"] = bench(softmax, (x, -1))  # the softmax alone, no compile
            fname = "model_" + label.split(" ")[0].replace(".", "_") + ".py"
            (OUT / fname).write_text("\n\n# ---- next output code ----\n\n".join(code))
            grad_bound = GRAD_ERR_OVER_EAGER * row["err_grad_eager_fp32"]
            if not (row["err_fwd"] < MAX_REL_ERR[torch.float32] and row["err_grad"] < grad_bound):
                failures.append(f"custom op {label}: rel err {row['err_fwd']}, {row['err_grad']}")
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            failures.append(f"custom op {label}: {row['error']}")
        op_rows.append(row)
        print(json.dumps(row), flush=True)
        write_report()


def write_report() -> str:
    props = torch.cuda.get_device_properties(0)
    lines = [
        f"Device: {props.name} ({props.multi_processor_count} SMs), CUDA {torch.version.cuda}; "
        f"torch {torch.__version__}, triton {triton.__version__}, Python {sys.version.split()[0]}; "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        "Times in us: median [p20–p80] of triton.testing.do_bench (L2 flushed before each run); "
        "rel. err = ‖out − ref‖/‖ref‖ against the reference in float64.",
        "",
        "| op | shape | dtype | rel. err ours | rel. err Inductor | ours (us) | Inductor (us) "
        "| eager (us) | Inductor / ours | throughput ours / Inductor | Inductor's kernels |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['op']} | {r['shape']} | {r['dtype']} | error: {r['error']} |")
            continue
        lines.append(
            f"| {r['op']} | {r['shape']} | {r['dtype']} | {r['err_ours']:.1e} | "
            f"{r['err_inductor']:.1e} | {fmt_t(r['t_ours'])} | {fmt_t(r['t_inductor'])} | "
            f"{r['t_eager'][1]:.1f} | {r['t_inductor'][1] / r['t_ours'][1]:.2f} | "
            f"{r['tp_ours']:.0f} / {r['tp_inductor']:.0f} {r['unit']} | "
            f"{', '.join(r['inductor_kernels'])} |"
        )
    if op_rows:
        lines += [
            "",
            "Softmax as a torch custom op in a compiled model, `softmax(x * 0.125) * 2 + 1`, "
            f"x {OP_SHAPE[0]}x{OP_SHAPE[1]} fp32 (forward timed; gradients checked):",
            "",
            "| softmax in the model | rel. err fwd | rel. err grad (eager fp32) | compiled forward "
            "(us) | the softmax alone, eager (us) | kernels in Inductor's forward and backward code |",
            "|---|---|---|---|---|---|",
        ]
        for r in op_rows:
            if "error" in r:
                lines.append(f"| {r['model']} | error: {r['error']} |")
                continue
            lines.append(
                f"| {r['model']} | {r['err_fwd']:.1e} | {r['err_grad']:.1e} "
                f"({r['err_grad_eager_fp32']:.1e}) | {fmt_t(r['t'])} | {fmt_t(r['t_op_eager'])} | "
                f"{', '.join(r['inductor_kernels'])} |"
            )
        lines += ["", *op_notes]
    text = "\n".join(lines) + "\n"
    (OUT / "gpu_kernels.md").write_text(text)
    (OUT / "gpu_kernels.json").write_text(json.dumps({"kernels": rows, "custom_ops": op_rows}))
    return text


if __name__ == "__main__":
    assert torch.cuda.is_available(), "needs a GPU"
    run_kernels()
    run_custom_ops()
    print(write_report())
    print(f"elapsed {time.time() - START:.0f} s")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)
