"""What each rank of a distributed job compiled, reduced to what ranks must agree on."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from ...common import STAGES
from ..compile import Compile
from ..graph import Graph
from ..place import Place

# Collective ops as graphs print them: `torch.ops._c10d_functional.all_reduce.default`, the
# older `c10d_functional`, the autograd-aware `_c10d_functional_autograd`, traced c10d
# (`torch.ops.c10d.allreduce_`), and funcol's Python API when Dynamo keeps it as a call.
# FSDP2's own staging ops (`torch.ops.fsdp.all_gather_copy_in`) are kept too, named `fsdp.*`:
# with FSDP2 traced into the graph they show where its all-gathers are fed.
_COLLECTIVE = re.compile(
    r"(?:^|\.)(_?c10d_functional(?:_autograd)?|c10d|_functional_collectives|fsdp)\.(\w+)"
)
_COLLECTIVE_HINT = ("c10d", "_functional_collectives", "ops.fsdp.")
# Each rank has its own device (`cuda:0`, `cuda:1`): the index is not a difference.
_DEVICE_INDEX = re.compile(r"\b(cuda|xpu|hpu|mps|npu|mtia):\d+")
# ... also where a graph passes the device as an argument: `device(type='cuda', index=1)`
# (aten.full in the backward, found by the first 2-GPU run).
_DEVICE_ARG_INDEX = re.compile(r"(device\(type='\w+'), index=\d+\)")
# The graphs a collective is looked for in, by what runs: Inductor's post-grad graphs, else
# AOTAutograd's, else Dynamo's (aot_eager and eager backends stop earlier).
_COLLECTIVE_STAGES = tuple(
    tuple(s.kind for s in STAGES if s.runs and s.layer == layer)
    for layer in ("inductor", "aot", "dynamo")
)
# Graph kinds whose text is compared between ranks (what every rank runs, in pipeline order):
# not the joint graph or the passes' before/after views of the same graphs, nor DDP's children
# (their split graph is compared).
COMPARED_GRAPHS = tuple(s.kind for s in STAGES if s.runs)


# Guards print object ids (`___check_type_id(self, 94654559507600)`) and reasons print object
# addresses (`<function f at 0x7f3a2c1e0d30>`): each process has its own.
_OBJECT_ID = re.compile(r"\b\d{9,}\b")
_OBJECT_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


# `/scratch/node7/job/model.py` -> `model.py`: the folder a rank runs from is not a difference.
_PY_DIRS = re.compile(r"(?:[\w.~-]*[/\\])+([\w.-]+\.py)\b")


def without_process_ids(text: str) -> str:
    """A guard or reason with object ids, device indices and source folders left out: what is
    the same on every rank that does the same."""
    text = _OBJECT_ADDRESS.sub("0x<id>", _OBJECT_ID.sub("<id>", text))
    return _PY_DIRS.sub(r"\1", without_device_index(text))


def without_device_index(text: str) -> str:
    """`f32[8][1]cuda:1` -> `f32[8][1]cuda`, `device(type='cuda', index=1)` ->
    `device(type='cuda')`: what two ranks' tensors share."""
    return _DEVICE_ARG_INDEX.sub(r"\1)", _DEVICE_INDEX.sub(r"\1", text))


# `# File: /home/node7/job/model.py:12 in forward`: nodes of one job may run the same code from
# different folders; the file's name and line are what must match.
_FILE_DIR = re.compile(r"(# File: )[^\n]*?([^/\\\n]+:\d+)")


def graph_hash(graph: Graph) -> str:
    """A short hash of a graph's text, the same on every rank for the same graph (device
    indices and the folders of source files left out)."""
    text = _FILE_DIR.sub(r"\1\2", without_device_index(graph.text)).encode("utf-8", "replace")
    return hashlib.sha1(text, usedforsecurity=False).hexdigest()[:12]


@dataclass(frozen=True)
class Collective:
    """One collective in a graph: `all_reduce` with its tensors and constant arguments."""

    op: str  # all_reduce, all_gather_into_tensor, reduce_scatter_tensor, wait_tensor, ...
    graph: str  # the graph kind it was found in
    tensors: str = ""  # output tensor(s) as torch prints them, device index dropped
    args: str = ""  # the call's arguments as printed (reduce op, group name, ...)
    node: str = ""  # the FX node's name

    def __str__(self) -> str:
        return f"{self.op}({self.args})" + (f" -> {self.tensors}" if self.tensors else "")


def collectives_of(graph: Graph) -> tuple[Collective, ...]:
    """The collectives of one graph, in graph order."""
    if not any(hint in graph.text for hint in _COLLECTIVE_HINT):
        return ()  # most graphs have none: do not parse their nodes for nothing
    found = []
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        match = _COLLECTIVE.search(node.target)
        if match:
            tensors = without_device_index(", ".join(str(t) for t in node.tensors))
            op = match.group(2) if match.group(1) != "fsdp" else f"fsdp.{match.group(2)}"
            found.append(Collective(op, graph.kind, tensors, node.args_text, node.name))
    return tuple(found)


@dataclass(frozen=True)
class RankCompile:
    """One compile id of one rank, as ranks are compared: equal on two ranks that agree."""

    compile_id: str  # without the rank: `0/1`
    frame: str = ""
    status: str = "ok"
    graph_hashes: tuple[tuple[str, str], ...] = ()  # (graph kind, hash), pipeline order
    inputs: tuple[str, ...] = ()  # Dynamo graph inputs: `L_x_: f32[8][1]cpu`
    collectives: tuple[Collective, ...] = ()
    cache: tuple[str, ...] = ()  # `fx_graph_cache miss`, in log order
    graph_breaks: tuple[str, ...] = ()  # `file.py:12 in fn: ` and the whole reason
    recompile_reasons: tuple[str, ...] = ()

    @property
    def is_recompile(self) -> bool:
        return bool(self.recompile_reasons)


def rank_compile(compile_: Compile) -> RankCompile:
    """Reduce one compile to what it must share with the same compile on another rank."""
    dynamo = compile_.graph("dynamo_output_graph")
    inputs: tuple[str, ...] = ()
    if dynamo is not None:
        inputs = tuple(
            without_device_index(f"{n.name}: {n.type_text}" if n.type_text else n.name)
            for n in dynamo.placeholders
        )
    # Whole records: the first line of a break's reason is torch's generic header ("Encountered
    # graph break when attempting to trace CALL ..."), the same for `print` and `os.getpid`.
    breaks = tuple(
        without_process_ids(
            f"{where}: {b.reason}" if (where := _user_frame(b.location, b.user_stack)) else b.reason
        )
        for b in compile_.graph_breaks
    )
    hashes = tuple(
        (kind, graph_hash(g)) for kind in COMPARED_GRAPHS for g in compile_.graphs.get(kind, ())
    )
    return RankCompile(
        compile_id=str(replace(compile_.id, rank=None)),
        frame=compile_.frame.function,
        status=compile_.status,
        graph_hashes=hashes,
        inputs=inputs,
        collectives=collectives_in(compile_),
        cache=tuple(f"{e.cache} {e.result}" for e in compile_.cache_events),
        graph_breaks=breaks,
        recompile_reasons=tuple(without_process_ids(r) for r in compile_.recompile_reasons if r),
    )


def _user_frame(location: Place | None, stack: tuple[Place, ...]) -> str:
    """`model.py:12 in forward`: the user's line of a break, with its function when known."""
    if location is None:
        return ""
    inner = stack[-1] if stack else None
    same = inner is not None and (inner.file, inner.line) == (location.file, location.line)
    return str(inner) if same else str(location)


def collectives_in(compile_: Compile) -> tuple[Collective, ...]:
    """The collectives of a compile, in the graphs that run (post-grad, else AOT, else Dynamo)."""
    for kinds in _COLLECTIVE_STAGES:
        graphs = [g for kind in kinds for g in compile_.graphs.get(kind, ())]
        if graphs:
            return tuple(c for g in graphs for c in collectives_of(g))
    return ()


# The aspects two ranks are compared on, in the order a difference is reported: what was
# compiled first, then how, then what it costs.
ASPECTS = (
    ("compile ids", "compile ids and recompiles"),
    ("graph breaks", "graph breaks"),
    ("inputs", "input tensor metadata"),
    ("graphs", "graphs"),
    ("collectives", "collectives"),
    ("cache", "cache hits and misses"),
)


# The RankCompile field each aspect other than compile ids reads.
ASPECT_FIELDS = {
    "graph breaks": "graph_breaks",
    "inputs": "inputs",
    "graphs": "graph_hashes",
    "collectives": "collectives",
    "cache": "cache",
}


def aspect_value(compile_: RankCompile, aspect: str) -> tuple[object, ...]:
    """What one compile shows of one aspect (compile ids: its status and recompile reasons)."""
    if aspect == "compile ids":
        return (compile_.status, compile_.recompile_reasons)
    value: tuple[object, ...] = getattr(compile_, ASPECT_FIELDS[aspect])
    return value


def aspect_key(compiles: tuple[RankCompile, ...], aspect: str) -> tuple[object, ...]:
    """What one rank shows of one aspect over its whole record: equal keys mean the ranks
    agree on it. A compile only one rank has counts where it shows something of the aspect
    (its graph breaks, inputs, graphs ...); its mere presence is a difference of compile ids."""
    if aspect == "compile ids":
        return tuple((c.compile_id, aspect_value(c, aspect)) for c in compiles)
    return tuple((c.compile_id, v) for c in compiles if (v := aspect_value(c, aspect)))
