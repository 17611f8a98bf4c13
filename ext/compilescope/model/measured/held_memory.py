"""Activation memory as the compiled code held it (measured live), beside the partition's prediction."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...common import human_bytes
from ..graph import Graph, TensorMeta
from ..partition import Partition, SavedTensor

# Dynamo's names for a module's parameters and buffers: `l_self_modules_c1_parameters_weight_`.
_PARAMETER = re.compile(r"^l_(?:self_)?modules_(.+?)_(?:parameters|buffers)_(.+?)_?$", re.I)


@dataclass(frozen=True)
class HeldTensor:
    """One tensor the compiled forward saved for backward, as it was when it ran."""

    tensor: TensorMeta | None = None  # dtype, shape, strides and device as saved
    storage: int = 0  # which storage holds it: equal numbers, one storage (per compile, from 1)
    storage_bytes: int = 0  # that storage's size
    kind: str = "activation"  # "input": the storage of a graph input or parameter (alive anyway)


@dataclass(frozen=True)
class HeldMemory:
    """What the compiled forward really saved for backward over one run (saved-tensor hooks),
    in the order the backward graph takes them."""

    tensors: tuple[HeldTensor, ...] = ()
    note: str = ""  # why it was not measured, or what limits the comparison

    @property
    def measured(self) -> bool:
        return bool(self.tensors)

    @property
    def activation_bytes(self) -> int:
        """Bytes of the distinct storages saved that are not inputs or parameters."""
        sizes = {t.storage: t.storage_bytes for t in self.tensors if t.kind == "activation"}
        return sum(sizes.values())


@dataclass(frozen=True)
class HeldDifference:
    """One saved tensor the compiled code held otherwise than the partition predicts."""

    saved: str  # the partition's name for it
    what: str  # "copy" (of an input), "layout", "dtype", "no memory" (an input's storage)
    detail: str
    extra_bytes: int = 0  # held beyond the prediction for it (negative: less)


def differences(
    partition: Partition, held: HeldMemory, names: dict[str, str] | None = None
) -> tuple[HeldDifference, ...]:
    """Where the compiled code held its saved tensors otherwise than predicted: copies of
    inputs made after the partition (layout conversions, dtype casts), other layouts.
    `names`: the forward's inputs by the user's names (`input_names`)."""
    predicted = _tensor_saves(partition)
    if not held.measured or len(predicted) != len(held.tensors):
        return ()
    found, counted = [], set()
    for s, h in zip(predicted, held.tensors, strict=True):
        change = _change(s.tensor, h.tensor)
        if s.kind == "input" and h.kind == "activation":
            extra = 0 if h.storage in counted else h.storage_bytes
            counted.add(h.storage)
            of = s.owner or s.name
            of += f" ({names[of]})" if names and of in names else ""
            how = change or "same layout and dtype"
            detail = f"a copy of {of} made after the partition ({how}): {human_bytes(extra)}"
            found.append(HeldDifference(s.name, "copy", detail, extra))
        elif s.kind == "activation" and h.kind == "input":
            detail = "held in an input's storage: no activation memory of its own"
            found.append(HeldDifference(s.name, "no memory", detail, -(s.nbytes or 0)))
        elif change:
            what = (
                "dtype" if s.tensor and h.tensor and s.tensor.dtype != h.tensor.dtype else "layout"
            )
            found.append(HeldDifference(s.name, what, f"saved as {change}"))
    return tuple(found)


def _tensor_saves(partition: Partition) -> list[SavedTensor]:
    """The saved values that are tensors, in the backward graph's order (sizes come apart)."""
    return [s for s in partition.saved if s.tensor is not None and s.kind != "symbol"]


def _change(before: TensorMeta | None, after: TensorMeta | None) -> str:
    """`strides (768, 256, 16, 1) -> (768, 1, 48, 3)`, `f32 -> bf16`, or "" when the same."""
    if before is None or after is None:
        return ""
    changes = []
    if before.dtype != after.dtype:
        changes.append(f"dtype {before.dtype} -> {after.dtype}")
    if before.shape == after.shape and before.stride != after.stride:
        changes.append(f"strides ({', '.join(before.stride)}) -> ({', '.join(after.stride)})")
    elif before.shape != after.shape:
        changes.append(f"{before} -> {after}")
    return ", ".join(changes)


def input_names(dynamo: Graph | None, forward: Graph | None) -> dict[str, str]:
    """`primals_1` -> `c1.weight`: the AOT forward's inputs by Dynamo's names (same order), from
    a compile's `dynamo_output_graph` and `aot_forward_graph`."""
    if dynamo is None or forward is None:
        return {}
    inputs = [n.name for n in dynamo.placeholders]
    primals = [n.name for n in forward.placeholders]
    if len(inputs) != len(primals):
        return {}
    out = {}
    for primal, name in zip(primals, inputs, strict=True):
        match = _PARAMETER.match(name)
        if match:
            out[primal] = f"{match.group(1).replace('_modules_', '.')}.{match.group(2)}"
        elif name[:2] in ("l_", "L_") and name.endswith("_"):
            out[primal] = name[2:-1]  # the argument `x` is `l_x_`
    return out


def held_text(partition: Partition, held: HeldMemory, names: dict[str, str] | None = None) -> str:
    """One line: what the compiled code held beside what the partition predicts, and why."""
    if not held.measured:
        return f"held by the compiled code: not measured ({held.note})" if held.note else ""
    real, predicted = held.activation_bytes, partition.activation_bytes
    text = f"held by the compiled code: {human_bytes(real)} (measured over one run"
    if real == predicted:
        return text + ", as the partition predicts)"
    found = differences(partition, held, names)
    copies = [d for d in found if d.what == "copy"]
    text += f"; the partition predicts {human_bytes(predicted)}, {_signed(real - predicted)})"
    if copies:
        which = ", ".join(names.get(d.saved, d.saved) if names else d.saved for d in copies)
        text += (
            f": {len(copies)} {'copy' if len(copies) == 1 else 'copies'} made after the "
            f"partition ({which}: {human_bytes(sum(d.extra_bytes for d in copies))})"
        )
    rest = real - predicted - sum(d.extra_bytes for d in found)
    if rest:
        text += f"; {_signed(rest)} in buffers the partition does not name"
    if held.note:
        text += f" [{held.note}]"
    return text


def _signed(n: int) -> str:
    return ("+" if n > 0 else "-") + human_bytes(abs(n))
