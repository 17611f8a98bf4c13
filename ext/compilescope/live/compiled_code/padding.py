"""How much of each padding mask a compiled graph took was padding, read from its first inputs, kept in each compile's metrics."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import torch

from ...model.capture import Capture
from .. import torch_bridge

METRIC = "padding"


def padding_shares(placeholders: list[str], example_inputs: list[object]) -> dict[str, float]:
    """Input name -> the share of its positions that are padding, for the (batch, sequence)
    masks among a graph's inputs: a 2-d input named `*mask*` of 0/1 values whose padding, in
    each row, is one run at its end or its start (right or left padding: a random mask, as a
    masked-LM's, is not padding). Integer masks pad with 0 (Hugging Face's `attention_mask`);
    bool ones with True where the name says padding (`key_padding_mask`), else with False. One
    read of each mask, where the graph compiles (a wait for the device then, not in the steps)."""
    out: dict[str, float] = {}
    for name, value in zip(placeholders, example_inputs, strict=False):
        low = name.lower()
        if "mask" not in low or not isinstance(value, torch.Tensor) or value.dim() != 2:
            continue
        if value.dtype.is_floating_point or value.dtype.is_complex or value.numel() == 0:
            continue
        with torch.no_grad():
            if not bool(((value == 0) | (value == 1)).all()):
                continue  # not a 0/1 mask (positions, bias): nothing to say
            pads_are_true = value.dtype == torch.bool and "padding" in low
            padded = (value != 0) if pads_are_true else (value == 0)
            steps = padded.to(torch.int8).diff(dim=1)
            one_run = (steps >= 0).all(dim=1) | (steps <= 0).all(dim=1)
            if not bool(one_run.all()):
                continue
            out[name] = float(padded.float().mean())
    return out


def with_padding(capture: Capture, shares: dict[str, dict[str, float]]) -> Capture:
    """The capture with METRIC ({input: share}) on the compiles whose masks were read."""
    if not shares:
        return capture
    compiles = tuple(
        replace(c, metrics={**c.metrics, METRIC: shares[str(c.id)]}) if str(c.id) in shares else c
        for c in capture.compiles
    )
    return replace(capture, compiles=compiles)


def placeholder_names(graph_module: Any) -> list[str]:
    return [n.name for n in graph_module.graph.nodes if n.op == "placeholder"]


@contextlib.contextmanager
def reading_masks(shares: dict[str, dict[str, float]]) -> Iterator[None]:
    """Inside, each graph Inductor compiles has its padding masks read into `shares` (compile
    id -> input -> share) from the real inputs Dynamo hands its backend. Dynamo's "inductor"
    backend imports `torch._inductor.compile_fx.compile_fx` at each call (torch/_dynamo/
    backends/inductor.py, 2.11-2.14), so the module's attribute is the one to wrap; the user's
    own torch.compile goes through it too, every mode."""
    import torch._inductor.compile_fx as module

    inner = module.compile_fx

    @functools.wraps(inner)
    def compile_fx(graph_module: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            cid = torch_bridge.current_compile_id()
            masks = padding_shares(placeholder_names(graph_module), list(example_inputs))
            if cid is not None and masks:
                shares[cid] = masks
        except Exception:  # noqa: BLE001 - never the user's compile: no share said
            pass
        return inner(graph_module, example_inputs, *args, **kwargs)

    module.compile_fx = compile_fx  # type: ignore[assignment]
    try:
        yield
    finally:
        module.compile_fx = inner
