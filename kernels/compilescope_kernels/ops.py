"""The softmax kernel as a torch custom op, so that a torch.compile'd model can call it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from triton.runtime import JITFunction

from compilescope_kernels.softmax import softmax, softmax_kernel

NAMESPACE = "compilescope"
Kind = Literal["auto", "triton_op", "custom_op"]


def triton_op_available() -> bool:
    """Whether this torch and this kernel can make a `triton_op` that torch.compile traces.

    `torch.library.triton_op` and `wrap_triton` arrived in torch 2.6; we look them up rather
    than compare versions, so torch 2.11 and 2.13 take the same path. Under TRITON_INTERPRET=1,
    `@triton.jit` returns an InterpretedFunction, which `wrap_triton` hands back unwrapped
    (torch/_library/triton.py), so torch.compile cannot trace it: CPU runs need the opaque op.
    """
    has_api = hasattr(torch.library, "triton_op") and hasattr(torch.library, "wrap_triton")
    return has_api and isinstance(softmax_kernel, JITFunction)


def _setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(output)


def _backward(ctx, grad: torch.Tensor) -> torch.Tensor:
    # d softmax: y * (g - sum(g * y)), in plain PyTorch ops that Inductor can fuse.
    (y,) = ctx.saved_tensors
    return y * (grad - (grad * y).sum(dim=-1, keepdim=True))


def _make_triton_op(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    @torch.library.triton_op(name, mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        # wrap_triton makes the launch traceable: torch.compile records the kernel and its
        # arguments, and Inductor launches it from its own generated code. torch runs this
        # same function on fake tensors to learn the output's shape, so no register_fake.
        return softmax(x, kernel=torch.library.wrap_triton(softmax_kernel))

    return op


def _make_custom_op(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return softmax(x)

    # What torch.compile traces instead of running the kernel: an output of the right shape,
    # dtype and (contiguous) layout, as `softmax` allocates it.
    @op.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)

    return op


_ops: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {}


def softmax_op(kind: Kind = "auto") -> Callable[[torch.Tensor], torch.Tensor]:
    """Register (once) and return the softmax kernel as a torch op; call it like `softmax(x)`.

    - "triton_op": `torch.ops.compilescope.softmax`, a `torch.library.triton_op`. torch.compile
      sees the Triton kernel inside the op; Inductor launches it from its generated code, next
      to the kernels it generates for the surrounding ops.
    - "custom_op": `torch.ops.compilescope.softmax_opaque`, a `torch.library.custom_op`. A
      black box: Inductor calls it as an extern kernel and cannot see into it.
    - "auto": "triton_op" where `triton_op_available()`, else "custom_op" (on a CPU, where the
      kernel runs through Triton's interpreter).

    Both have a backward written in PyTorch, so a model that uses them can be trained.
    """
    if kind == "auto":
        kind = "triton_op" if triton_op_available() else "custom_op"
    if kind == "triton_op" and not triton_op_available():
        raise RuntimeError(
            "softmax_op: triton_op needs torch>=2.6 and a compiled (not interpreted) kernel"
        )
    if kind not in ("triton_op", "custom_op"):
        raise ValueError(f"softmax_op: kind {kind!r}; want 'auto', 'triton_op' or 'custom_op'")
    name = f"{NAMESPACE}::softmax" if kind == "triton_op" else f"{NAMESPACE}::softmax_opaque"
    if name not in _ops:
        op = _make_triton_op(name) if kind == "triton_op" else _make_custom_op(name)
        op.register_autograd(_backward, setup_context=_setup_context)
        _ops[name] = op
    return _ops[name]
