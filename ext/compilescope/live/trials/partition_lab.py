"""The partition lab: keep each compile's joint graph and run AOTAutograd's partitioners again."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...model.capture import Capture
from ...model.compile_id import heard_for
from ...model.partition import Partition, Repartition, partition_between
from .. import torch_bridge
from ..compiled_code.fx_graphs import graph_from_torch
from . import torch_partitioners

if TYPE_CHECKING:
    import torch

# A capture keeps joint graphs up to this many nodes in all: each is a copy of the graph with
# its fake-tensor metadata (no tensor data), about 2-3 KB a node.
MAX_KEPT_NODES = 200_000
# %%compile_fx runs the budget sweep itself for joint graphs up to this size (a second or two
# for the sweep's 12 partitions); for larger ones the view says how to ask for it.
AUTO_SWEEP_NODES = 250


@dataclass
class JointRecord:
    """What the partitioner was given: the joint graph (a copy), its inputs and options."""

    graph_module: torch.fx.GraphModule
    joint_inputs: object
    kwargs: dict[str, Any]
    # torch._functorch.config as it was: the partitioner reads it
    functorch_config: dict[str, object]
    partitioner: str  # "min_cut", "default" or "custom"
    memory_budget: float | None  # None: no budget (torch's default, 1.0)
    nodes: int


class JointRecorder:
    """Hears each partitioner call of a capture and keeps its input, within MAX_KEPT_NODES."""

    def __init__(self) -> None:
        self.records: dict[str, JointRecord] = {}  # compile id (CompileContext's) -> record
        self.notes: dict[str, str] = {}  # compile id -> why its joint graph was not kept
        self.kept_nodes = 0

    def hear(
        self,
        partitioner: str,
        graph_module: torch.fx.GraphModule,
        joint_inputs: object,
        kwargs: dict[str, Any],
    ) -> None:
        compile_id = torch_bridge.current_compile_id()
        if compile_id is None:
            return
        nodes = len(graph_module.graph.nodes)
        if self.kept_nodes + nodes > MAX_KEPT_NODES:
            self.notes[compile_id] = (
                f"its joint graph ({nodes} nodes) was not kept: this capture already keeps "
                f"{self.kept_nodes} nodes of joint graphs (at most {MAX_KEPT_NODES})"
            )
            return
        self.kept_nodes += nodes
        budget = torch_partitioners.activation_memory_budget()
        self.records[compile_id] = JointRecord(
            torch_partitioners.copy_graph_module(graph_module),  # the partitioner edits its input
            joint_inputs,
            dict(kwargs),
            torch_partitioners.functorch_config(),
            partitioner,
            None if budget is None or budget >= 1.0 else budget,
            nodes,
        )


class LiveLab:
    """One compile's kept joint graph; runs the partitioners on copies of it, keeps results."""

    def __init__(self, record: JointRecord) -> None:
        self._record = record
        self._results: list[Repartition] = []

    @property
    def nodes(self) -> int:
        return self._record.nodes

    @property
    def results(self) -> tuple[Repartition, ...]:
        return tuple(self._results)

    def repartition(self, partitioner: str, memory_budget: float | None) -> Partition:
        r = self._record
        fn = torch_partitioners.partitioner_fn(partitioner)
        accepted = inspect.signature(fn).parameters
        kwargs = {k: v for k, v in r.kwargs.items() if k in accepted}
        graph_module = torch_partitioners.copy_graph_module(r.graph_module)
        with (
            torch_partitioners.functorch_config_held(r.functorch_config, memory_budget),
            torch_partitioners.as_in_a_compile(r.joint_inputs),
        ):
            forward_module, backward_module = fn(graph_module, r.joint_inputs, **kwargs)
        forward = graph_from_torch(forward_module, "aot_forward_graph")
        backward = graph_from_torch(backward_module, "aot_backward_graph")
        recomputed = {n.name for n in forward.nodes} & {n.name for n in backward.nodes}
        partition = partition_between(
            forward,
            backward,
            partitioner=partitioner,
            memory_budget=memory_budget,
            recompute_flops=torch_partitioners.flops_of(backward_module, recomputed),
        )
        self._results.append(Repartition(partitioner, memory_budget, partition))
        return partition


@contextlib.contextmanager
def recording_partitions(recorder: JointRecorder) -> Iterator[None]:
    """Inside, every Inductor partition of the joint graph is heard by `recorder` first."""
    with torch_partitioners.partitioner_listener(recorder.hear):
        yield


def with_partition_labs(capture: Capture, recorder: JointRecorder, why_not: str = "") -> Capture:
    """Attach a lab to each compile whose joint graph was kept; others say why not."""

    compiles = []
    for c in capture.compiles:
        if c.graph("aot_backward_graph") is None:
            compiles.append(c)  # inference graphs have no partition
            continue
        record = heard_for(recorder.records, c.id)
        if record is None:
            note = heard_for(recorder.notes, c.id) or why_not or _NOT_HEARD
            compiles.append(replace(c, lab_note=note))
            continue
        compiles.append(
            replace(
                c,
                lab=LiveLab(record),
                partitioner=record.partitioner,
                memory_budget=record.memory_budget,
            )
        )
    return replace(capture, compiles=tuple(compiles))


_NOT_HEARD = (
    "its partitioner was not heard (compilescope hears Inductor's partitioner and the "
    "aot_eager backends that %%compile_fx and capture() build)"
)


def sweep_small_graphs(capture: Capture, max_nodes: int = AUTO_SWEEP_NODES) -> None:
    """Run the budget sweep now for compiles whose joint graph is small, so the view shows it
    without being asked; larger ones wait for `Compile.budget_sweep()`."""
    for c in capture:
        if isinstance(c.lab, LiveLab) and c.lab.nodes <= max_nodes:
            try:
                c.budget_sweep()
            except Exception:  # never the cell's failure: the view offers budget_sweep(),
                continue  # which raises the error where the user can read it
