"""What crosses from forward to backward: saved tensors, real activation memory, recomputation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..common import human_bytes
from .graph import Graph, Node, TensorMeta

# ATen operators whose output shares its first input's memory (torch's view ops, plus the
# multi-output ones whose items are views). `_unsafe_view` and `reshape` are included: in the
# functional graphs AOTAutograd logs, Inductor lowers both to reinterpretations, never copies.
VIEW_OPS = frozenset(
    "view _unsafe_view reshape alias detach t transpose permute expand squeeze unsqueeze slice "
    "select as_strided narrow diagonal unfold view_as_real view_as_complex split split_with_sizes "
    "unbind chunk real imag".split()
)
PARTITIONERS = ("min_cut", "default")


def aten_name(target: str) -> str:
    """`torch.ops.aten.view.default` -> `view` (the operator's overload packet name)."""
    parts = target.split(".")
    if "aten" in parts:
        rest = parts[parts.index("aten") + 1 :]
        return rest[0] if rest else ""
    return ""


def is_view(node: Node) -> bool:
    """A node whose output aliases its first input (a getitem of a view-producing op too)."""
    return node.op == "call_function" and aten_name(node.target) in VIEW_OPS


@dataclass(frozen=True)
class SavedTensor:
    """A value the forward graph saves for the backward graph (AOTAutograd's partition).

    `owner` is the forward node whose memory it keeps alive, found by following views back to
    their base (itself when it is no view); `kind` says what that owner is: an "activation"
    (computed by the forward: the memory the partition costs), an "input" (a graph input or
    parameter, alive anyway), or a "symbol" (a saved size, no tensor memory).
    """

    name: str
    tensor: TensorMeta | None = None
    type_text: str = ""
    owner: str = ""
    owner_tensor: TensorMeta | None = None
    kind: str = ""

    @property
    def nbytes(self) -> int | None:
        return self.tensor.nbytes if self.tensor else None


@dataclass(frozen=True)
class Partition:
    """How AOTAutograd split the joint graph: what crosses from forward to backward, and what
    the backward computes again instead of saving it."""

    saved: tuple[SavedTensor, ...] = field(default_factory=tuple)
    recomputed: tuple[str, ...] = ()  # forward nodes the backward computes again, in its order
    recomputed_views: int = 0  # how many of those are views (free: no compute, no memory)
    recompute_flops: int | None = None  # FLOPs of the recomputed ops, where torch counts them
    partitioner: str = ""  # "min_cut", "default", "custom"; "" when not known (a log)
    memory_budget: float | None = None  # torch._functorch.config.activation_memory_budget

    @property
    def saved_bytes(self) -> int:
        """Bytes saved for backward; symbolic sizes count as 0 (see `symbolic_saved`)."""
        return sum(s.nbytes or 0 for s in self.saved)

    @property
    def activation_bytes(self) -> int:
        """The real activation memory: the memory of saved tensors that the forward computed,
        each owner counted once however many views of it are saved. Inputs, parameters and
        views of them cost nothing extra (they are alive anyway). Symbolic sizes count as 0:
        `symbolic_activations` names them, and `activation_text` says so."""
        return sum(n or 0 for n in self._activation_owners().values())

    @property
    def symbolic_activations(self) -> tuple[str, ...]:
        """The activations (by owner) whose size is symbolic: not counted in activation_bytes."""
        return tuple(owner for owner, n in self._activation_owners().items() if n is None)

    def _activation_owners(self) -> dict[str, int | None]:
        """Owner of each saved activation -> its bytes (None: symbolic), each owner once."""
        owners: dict[str, int | None] = {}
        for s in self.saved:
            if s.kind == "activation":
                meta = s.owner_tensor or s.tensor
                owners[s.owner or s.name] = meta.nbytes if meta else None
        return owners

    def activation_text(self) -> str:
        """The activation memory for people: "1.5 MiB", "1.5 MiB + 2 of symbolic size", or
        "2 activations of symbolic size" (never "0 B" for tensors whose size is a symbol)."""
        symbolic = len(self.symbolic_activations)
        if not symbolic:
            return human_bytes(self.activation_bytes)
        if not self.activation_bytes:
            return f"{symbolic} activation{'s' if symbolic != 1 else ''} of symbolic size"
        return f"{human_bytes(self.activation_bytes)} + {symbolic} of symbolic size"

    @property
    def recomputed_ops(self) -> int:
        """Recomputed nodes that compute (views excluded)."""
        return len(self.recomputed) - self.recomputed_views

    @property
    def symbolic_saved(self) -> tuple[str, ...]:
        """Saved values whose size is not a number (symbolic shapes, SymInts)."""
        return tuple(s.name for s in self.saved if s.nbytes is None)

    @property
    def saved_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.saved)


def partition_between(
    forward: Graph | None,
    backward: Graph,
    *,
    partitioner: str = "",
    memory_budget: float | None = None,
    recompute_flops: int | None = None,
) -> Partition:
    """The partition that a forward and a backward graph make: the backward's non-tangent
    inputs are the saved values; forward nodes that the backward computes again (torch's own
    test: a call_function name in both graphs, torch/_functorch/partitioners.py) are
    recomputed."""
    by_name = {n.name: n for n in forward.nodes} if forward else {}
    saved = []
    for node in backward.placeholders:
        if node.name.startswith("tangents_") or (by_name and node.name not in by_name):
            continue
        tensor = node.tensors[0] if node.tensors else None
        owner = _owner(by_name, node.name) if by_name else None
        if tensor is None:
            kind = "symbol" if node.type_text.startswith("Sym") else ""
        elif owner is None:
            kind = ""
        else:
            kind = "input" if owner.op == "placeholder" else "activation"
        saved.append(
            SavedTensor(
                node.name,
                tensor,
                node.type_text,
                owner=owner.name if owner is not None and owner.name != node.name else "",
                owner_tensor=owner.tensors[0]
                if owner is not None and owner.name != node.name and owner.tensors
                else None,
                kind=kind,
            )
        )
    forward_ops = {n.name for n in forward.nodes if n.op == "call_function"} if forward else set()
    recomputed = [n for n in backward.nodes if n.op == "call_function" and n.name in forward_ops]
    return Partition(
        tuple(saved),
        tuple(n.name for n in recomputed),
        sum(is_view(n) for n in recomputed),
        recompute_flops,
        partitioner,
        memory_budget,
    )


def _owner(by_name: dict[str, Node], name: str) -> Node | None:
    """The forward node whose memory `name` uses: views followed back to their base."""
    node = by_name.get(name)
    seen = set()
    while node is not None and node.name not in seen:
        seen.add(node.name)
        if node.op == "call_function" and node.target.endswith("getitem") and node.inputs:
            parent = by_name.get(node.inputs[0])
            if parent is None or not is_view(parent):
                return node  # an item of a multi-output op (e.g. layer norm's mean): its own
            node = parent
            continue
        if not is_view(node) or not node.inputs:
            return node
        node = by_name.get(node.inputs[0])
    return node


@dataclass(frozen=True)
class Repartition:
    """The result of running a partitioner again on a captured joint graph."""

    partitioner: str
    memory_budget: float | None
    partition: Partition


class PartitionLab(Protocol):
    """What a live capture keeps to run the partitioners again (compilescope.live's)."""

    @property
    def results(self) -> tuple[Repartition, ...]: ...

    def repartition(self, partitioner: str, memory_budget: float | None) -> Partition: ...


class RepartitionUnavailable(RuntimeError):
    """The joint graph needed to re-partition was not kept (a log, another torch, a backend)."""


def check_repartition_args(partitioner: str, memory_budget: float | None) -> float | None:
    """Validate `repartition`'s arguments; the budget comes back as a float (or None)."""
    if partitioner not in PARTITIONERS:
        raise ValueError(f"partitioner must be one of {PARTITIONERS}, not {partitioner!r}")
    if memory_budget is None:
        return None
    if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, float)):
        raise TypeError(
            f"memory_budget must be a number in [0, 1] or None, not {type(memory_budget).__name__}"
        )
    if not 0.0 <= float(memory_budget) <= 1.0:
        raise ValueError(f"memory_budget must be in [0, 1], not {memory_budget!r}")
    if partitioner == "default":
        raise ValueError("memory_budget applies to the min_cut partitioner only")
    return float(memory_budget)


# Budgets a sweep tries: from "recompute everything it may" (0) to no budget (None, i.e. 1.0).
SWEEP_BUDGETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, None)


@dataclass(frozen=True)
class BudgetSweep:
    """Activation memory against recomputation, min-cut at each budget, default beside it."""

    min_cut: tuple[Repartition, ...]  # by budget, ascending; None (no budget) last
    default: Repartition | None = None
    captured: Partition | None = None  # what the compile actually did

    @property
    def points(self) -> list[dict[str, Any]]:
        """One row per partition: budget, activation bytes, saved tensors, recomputed ops,
        FLOPs, and whether it is the captured choice (same saved tensors as the compile)."""
        rows = []
        chosen = self.captured
        captured = set(chosen.saved_names) if chosen else None
        for r in (*self.min_cut, *((self.default,) if self.default else ())):
            p = r.partition
            rows.append(
                {
                    "partitioner": r.partitioner,
                    "budget": 1.0 if r.memory_budget is None else r.memory_budget,
                    "activation_bytes": p.activation_bytes,
                    "saved": len(p.saved),
                    "recomputed_ops": p.recomputed_ops,
                    "recompute_flops": p.recompute_flops,
                    "captured": chosen is not None
                    and set(p.saved_names) == captured
                    and r.partitioner == chosen.partitioner
                    and r.memory_budget == chosen.memory_budget,
                }
            )
        return rows


def sweep_from(results: tuple[Repartition, ...], captured: Partition | None) -> BudgetSweep | None:
    """The sweep that the re-partitions made so far describe (None without min-cut points)."""
    by_budget = {r.memory_budget: r for r in results if r.partitioner == "min_cut"}
    if len(by_budget) < 2:
        return None
    order = sorted(by_budget, key=lambda b: 1.0 + 1e-9 if b is None else b)
    default = next((r for r in results if r.partitioner == "default"), None)
    return BudgetSweep(tuple(by_budget[b] for b in order), default, captured)
