"""Graphs as structured data: nodes with op, target, edges, tensor metadata and source lines."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .place import Place

# `f32[4, 8][8, 1]cpu`, `bf16[s0, 64][64, 1]cuda:0`; sizes may be sympy expressions.
_TENSOR = re.compile(r"([a-z]+[0-9a-z]*)\[([^\]]*)\]\[([^\]]*)\]([a-z]+(?::\d+)?)")


@dataclass(frozen=True)
class TensorMeta:
    """One tensor value as torch prints it: `f32[4, 8][8, 1]cpu` (sizes may be symbols)."""

    dtype: str
    shape: tuple[str, ...]
    stride: tuple[str, ...]
    device: str

    # torch's short dtype names (torch/_subclasses/fake_tensor.py's print format) -> bytes.
    _ITEMSIZE = {
        "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3fnuz": 1,
        "f8e5m2fnuz": 1, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u64": 8, "u32": 4, "u16": 2,
        "u8": 1, "b8": 1, "c64": 8, "c128": 16, "c32": 4,
    }  # fmt: skip

    @property
    def numel(self) -> int | None:
        """Element count, or None when a size is symbolic."""
        total = 1
        for size in self.shape:
            if not size.isdigit():
                return None
            total *= int(size)
        return total

    @property
    def nbytes(self) -> int | None:
        """Bytes of a dense tensor of this shape and dtype; None if symbolic or unknown dtype."""
        numel, itemsize = self.numel, self._ITEMSIZE.get(self.dtype)
        return None if numel is None or itemsize is None else numel * itemsize

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(self.shape)}][{', '.join(self.stride)}]{self.device}"

    @classmethod
    def parse_all(cls, text: str) -> tuple[TensorMeta, ...]:
        """Every tensor written in a printed annotation (several for tuple-valued nodes)."""
        return tuple(
            cls(dtype, _split_dims(shape), _split_dims(stride), device)
            for dtype, shape, stride, device in _TENSOR.findall(text)
        )


def _split_dims(text: str) -> tuple[str, ...]:
    # Sizes can be expressions with commas inside parentheses (`Max(1, s0)`): split at depth 0.
    dims, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            dims.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        dims.append(text[start:].strip())
    return tuple(dims)


# The FX ops that compute; the others read inputs or attributes, or return.
COMPUTING_OPS = ("call_function", "call_method", "call_module")


@dataclass(frozen=True)
class Node:
    """One FX node. `inputs` are the names of the nodes it reads: the graph's edges."""

    name: str
    op: str  # placeholder, call_function, call_method, call_module, get_attr, output
    target: str
    inputs: tuple[str, ...] = ()
    args_text: str = ""
    tensors: tuple[TensorMeta, ...] = ()
    type_text: str = ""  # the printed annotation, e.g. "f32[4, 8][8, 1]cpu" or "Sym(s0)"
    source: Place | None = None
    module_path: str | None = None
    note: str = ""  # torch's trailing comment, e.g. "SavedForBackwardsAOTOutput(idx=0)"

    def describe(self) -> str:
        """One line: `call_function aten.mm.default(x, w) : f32[4, 8][8, 1]cpu`."""
        kind = self.type_text or ", ".join(str(t) for t in self.tensors)
        text = f"{self.op} {self.target}({self.args_text})"
        return f"{text} : {kind}" if kind else text


class Graph:
    """A graph of one stage: torch's readable text, and its nodes (parsed on first use)."""

    __slots__ = ("kind", "text", "metadata", "_nodes", "_load_nodes")

    def __init__(
        self,
        kind: str,
        text: str,
        nodes: Sequence[Node] | None = None,
        *,
        load_nodes: Callable[[], Sequence[Node]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.kind = kind
        self.text = text
        self.metadata = metadata or {}
        self._nodes = tuple(nodes) if nodes is not None else None
        self._load_nodes = load_nodes

    @property
    def nodes(self) -> tuple[Node, ...]:
        if self._nodes is None:
            self._nodes = tuple(self._load_nodes()) if self._load_nodes else ()
            self._load_nodes = None
        return self._nodes

    def node(self, name: str) -> Node:
        """The node called `name`; KeyError names the graph and the missing node."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node {name!r} in {self.kind}")

    @property
    def op_count(self) -> int:
        """Nodes that compute (not inputs, outputs or attribute reads)."""
        return sum(n.op in COMPUTING_OPS for n in self.nodes)

    @property
    def placeholders(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.op == "placeholder")

    @property
    def output(self) -> Node | None:
        return next((n for n in reversed(self.nodes) if n.op == "output"), None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return (self.kind, self.text, self.nodes, self.metadata) == (
            other.kind,
            other.text,
            other.nodes,
            other.metadata,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.text))

    def __repr__(self) -> str:
        return f"Graph({self.kind!r}, {len(self.nodes)} nodes)"
