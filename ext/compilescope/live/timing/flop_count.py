"""FLOPs of one op call, by torch's own formulas (torch.utils.flop_counter), for graphs and kernels alike."""

from __future__ import annotations

import torch


def formula_flops(
    packet: object, args: tuple[object, ...], kwargs: dict[str, object], out: object
) -> int | None:
    """FLOPs of one call of an aten op packet (`torch.ops.aten.mm`) on tensors or fake tensors;
    None when torch has no formula for it or cannot apply it to these arguments."""
    try:
        from torch.utils.flop_counter import flop_registry
    except ImportError:  # pragma: no cover - flop_counter is in every torch we support
        return None
    formula = flop_registry.get(packet)
    if formula is None:
        return None
    try:
        count = formula(*args, **kwargs, out_val=out)
    except Exception:  # symbolic sizes, or a formula this torch cannot apply here
        return None
    if isinstance(count, torch.SymInt):
        # Counted at the sizes the compile saw: int() would guard on the symbol and specialize
        # it in the compile's shape environment, changing later re-runs.
        count = count.node.hint
    return None if count is None else int(count)


def kernel_flops(
    kernel: str, args: tuple[object, ...], kwargs: dict[str, object], out: object
) -> int | None:
    """FLOPs of one call of an output module's extern kernel (`extern_kernels.mm`,
    `aten._scaled_dot_product_flash_attention.default`); None for Inductor's own kernels."""
    parts = kernel.split(".")
    op = parts[-2] if parts[-1] == "default" and len(parts) > 1 else parts[-1]
    packet = getattr(torch.ops.aten, op, None) if op.isidentifier() else None
    if op == "convolution" and parts[0] == "extern_kernels" and len(args) >= 2:
        # Inductor's extern convolution takes its options by keyword (torch/_inductor/
        # select_algorithm.py); aten's formula reads them by position.
        transposed = bool(kwargs.get("transposed", False))
        args, kwargs = (args[0], args[1], None, None, None, None, transposed), {}
    elif parts[0] == "extern_kernels":
        kwargs = {k: v for k, v in kwargs.items() if k == "out"}
    return formula_flops(packet, args, kwargs, out)
