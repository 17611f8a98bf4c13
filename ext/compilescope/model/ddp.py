"""DDP's graph splitting: the subgraphs Dynamo's DDPOptimizer made, and the parameters of each."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..common import human_bytes
from .graph import Graph, TensorMeta

# DDPOptimizer prints its graphs without strides or devices: `"f32[512, 16]"`.
_SHAPE = re.compile(r"^([a-z]+[0-9a-z]*)\[([^\]]*)\]")
_PARAMETER = re.compile(r"^l_(?:self_)?modules_(.+?)_(parameters|buffers)_(.+?)_?$")

WHY = (
    "Dynamo's DDPOptimizer split the graph at DDP's gradient-bucket boundaries (bucket_cap_mb), "
    "so that each bucket's all-reduce can start while the backward of the earlier subgraphs "
    "still runs; the all-reduces themselves run in DDP's hooks, outside the graphs. "
    "torch._dynamo.config.optimize_ddp = False keeps one graph."
)


@dataclass(frozen=True)
class SplitPart:
    """One subgraph (`submod_0`): its ops and the parameters whose gradients it produces."""

    name: str
    ops: int
    parameters: tuple[tuple[str, str], ...]  # (module.parameter, "f32[512, 16]")
    parameter_bytes: int | None  # None when a size is symbolic or a dtype unknown

    def __str__(self) -> str:
        size = human_bytes(self.parameter_bytes) if self.parameter_bytes is not None else "?"
        names = ", ".join(name for name, _ in self.parameters) or "no parameters"
        return f"{self.name}: {self.ops} ops, {len(self.parameters)} parameters ({size}): {names}"


@dataclass(frozen=True)
class DdpSplit:
    """How DDPOptimizer split one compile's graph, in the order the subgraphs run."""

    compile_id: str
    parts: tuple[SplitPart, ...]
    why: str = WHY

    def __str__(self) -> str:
        lines = [f"{self.compile_id}: DDPOptimizer split the graph into {len(self.parts)}"]
        lines += [f"  {part}" for part in self.parts]
        return "\n".join(lines)


def ddp_split(compile_id: str, graphs: Mapping[str, tuple[Graph, ...]]) -> DdpSplit | None:
    """The split of one compile under DDP, from its graphs by torch's event name (None when
    DDPOptimizer did not split it). `Compile.ddp_split` asks with its own."""
    children = graphs.get("optimize_ddp_split_child", ())
    if not children:
        return None
    parts = []
    for number, child in enumerate(children):
        parameters: list[tuple[str, str]] = []
        total: int | None = 0
        for node in child.placeholders:
            match = _PARAMETER.match(node.name.lower())
            if not match:
                continue  # an activation from the previous subgraph, or a user input
            name = f"{match.group(1).replace('_modules_', '.')}.{match.group(3)}"
            parameters.append((name, node.type_text))
            size = _bytes(node.type_text)
            total = None if size is None or total is None else total + size
        name = str(child.metadata.get("name") or f"submod_{number}")
        parts.append(SplitPart(name, child.op_count, tuple(parameters), total))
    return DdpSplit(compile_id, tuple(parts))


def _bytes(type_text: str) -> int | None:
    match = _SHAPE.match(type_text)
    if not match:
        return None
    dims = tuple(d.strip() for d in match.group(2).split(",") if d.strip())
    return TensorMeta(match.group(1), dims, (), "").nbytes
