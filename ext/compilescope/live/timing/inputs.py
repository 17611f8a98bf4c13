"""Fresh inputs to time a graph alone on: the recorded layout, integer values and float moments."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# Integer and bool inputs are token ids, indices, masks: their values decide where a kernel reads
# and writes (an embedding's backward adds rows with atomics; all-zero ids collide on one row and
# run much slower than real tokens: RESULTS.md). So they are copied when the graph compiles,
# up to this many bytes per graph, and timed on; larger ones are timed on zeros.
VALUE_COPY_BYTES = 64 << 20


@dataclass(frozen=True)
class _ListOf:
    """A list input's layout (compiled autograd's graph takes `inputs` and `sizes` as lists)."""

    items: list[object]


def input_layout(example_inputs: list[object]) -> list[object]:
    """Each input's (shape, stride, dtype, device, requires_grad), or the value of a constant."""
    layout: list[object] = []
    for value in example_inputs:
        if isinstance(value, list) and any(isinstance(v, torch.Tensor) for v in value):
            # Recorded as a layout, never by reference: compiled autograd clears its lists.
            layout.append(_ListOf(input_layout(value)))
        elif isinstance(value, torch.Tensor):
            shape = tuple(int(s) for s in value.shape)
            stride = tuple(int(s) for s in value.stride())
            layout.append((shape, stride, value.dtype, value.device, value.requires_grad))
        elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            # A dynamic size reaches the backend as a symbol; running needs its concrete value.
            layout.append(value.node.hint)
        else:
            layout.append(value)  # other constants, as the call passed them
    return layout


def input_values(
    example_inputs: list[object], limit: int = VALUE_COPY_BYTES
) -> dict[int, torch.Tensor]:
    """Copies of the integer and bool inputs a graph compiled with (position -> copy), within
    `limit` bytes: what they index depends on their values, not only their layout."""
    values: dict[int, torch.Tensor] = {}
    left = limit
    for position, value in enumerate(example_inputs):
        # Plain dense tensors only: a fake or subclass tensor has no values to copy.
        if type(value) is not torch.Tensor or value.layout != torch.strided:
            continue
        if value.dtype.is_floating_point or value.dtype.is_complex or value.is_meta:
            continue
        size = value.numel() * value.element_size()
        if size > left:
            continue
        try:
            with torch.no_grad():
                values[position] = value.detach().clone()
        except Exception:  # runs inside the user's compile: a value we cannot copy is not timed on
            continue
        left -= size
    return values


def input_moments(example_inputs: list[object]) -> dict[int, torch.Tensor]:
    """Mean and standard deviation of each floating-point input (position -> a float32 tensor
    (mean, std), read only when timing: no device sync while compiling). Timing draws its fresh
    inputs from a normal distribution of these: what a kernel's math functions cost depends on
    the values (a GELU's tanh runs faster on standard normal weights, whose activations
    saturate it, than on a model's real ones: RESULTS.md)."""
    moments: dict[int, torch.Tensor] = {}
    for position, value in enumerate(example_inputs):
        # Plain dense tensors and parameters only: a fake or subclass tensor has no values.
        plain = type(value) in (torch.Tensor, torch.nn.Parameter)
        if not plain or not isinstance(value, torch.Tensor) or value.numel() < 2:
            continue
        if value.layout != torch.strided or value.is_meta:
            continue
        if not value.dtype.is_floating_point or value.dtype.itemsize < 2:
            continue
        try:
            with torch.no_grad():
                std, mean = torch.std_mean(value.detach())
                moments[position] = torch.stack([mean, std]).float()
        except Exception:  # runs inside the user's compile: such an input is drawn as before
            continue
    return moments


def make_inputs(
    layout: list[object],
    values: dict[int, torch.Tensor] | None = None,
    moments: dict[int, torch.Tensor] | None = None,
) -> list[object]:
    """Fresh tensors of the recorded layout (never the user's own: running must not touch them),
    with the recorded values where there are some (copies made at compile time) and floats
    drawn with the recorded mean and deviation."""
    from torch._dynamo.testing import rand_strided

    inputs: list[object] = []
    for position, spec in enumerate(layout):
        if isinstance(spec, _ListOf):
            inputs.append(make_inputs(spec.items))
            continue
        if not isinstance(spec, tuple) or len(spec) != 5:
            inputs.append(spec)
            continue
        shape, stride, dtype, device, requires_grad = spec
        known = (values or {}).get(position)
        if known is not None and tuple(known.shape) == shape and known.dtype == dtype:
            inputs.append(
                torch.empty_strided(shape, stride, dtype=dtype, device=device).copy_(known)
            )
        elif dtype.is_floating_point or dtype.is_complex:
            tensor = rand_strided(shape, stride, dtype=dtype, device=device)
            moment = (moments or {}).get(position)
            if moment is not None:
                mean, std = moment.tolist()
                if math.isfinite(mean) and math.isfinite(std):  # an -inf mask has neither
                    with torch.no_grad():
                        tensor.normal_(mean, std)
            inputs.append(tensor.requires_grad_(requires_grad))
        else:  # integers too large to have been copied: zeros are always valid indices
            inputs.append(rand_strided(shape, stride, dtype=dtype, device=device).zero_())
    return inputs


def layout_device(layout: list[object]) -> str:
    """The device of a layout's first tensor (cpu when it has none)."""
    for spec in layout:
        if isinstance(spec, _ListOf):
            return layout_device(spec.items)
        if isinstance(spec, tuple) and len(spec) == 5:
            return str(spec[3])
    return "cpu"
