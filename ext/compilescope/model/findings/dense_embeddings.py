"""Large embedding tables trained with dense gradients: each step writes, and the optimizer updates, every row for the few rows a batch looks up (`sparse=True` updates those rows only)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...common import human_bytes
from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding
from .perf import library_time
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..graph import Node
    from ..measured.timing import RealSteps

# F.embedding's and F.embedding_bag's positional `sparse` argument.
_SPARSE_AT = {"embedding": 6, "embedding_bag": 7}
# A table this small, or looked up this densely, gains little from sparse gradients.
_LEAST_ROWS = 65536
_ROWS_PER_LOOKUP = 8
_BYTES = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2}


def dense_embedding_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Embedding lookups in a compiled graph whose weight is a parameter of at least
    _LEAST_ROWS rows, looked up at _ROWS_PER_LOOKUP times fewer indices than its rows, with
    sparse=False (the fifth blind round's DLRM: 8 tables of 4M rows, 4.92x with
    `sparse=True` and SGD, H200). Cost: the embedding ops' measured time (their backward
    writes the dense gradient), and the eager optimizers' update of every row."""
    wall = real.compiled.median_s
    if wall <= 0:
        return []
    found = []
    for c in capture:
        g = c.graph("dynamo_output_graph")
        if g is None:
            continue
        by_name = {n.name: n for n in g.nodes}
        tables = [t for n in g.nodes if (t := _dense_table(n, by_name)) is not None]
        if not tables:
            continue
        cid = str(c.id)
        ops_s, _ids = library_time(capture, real, _embedding_ops_of(cid))
        rows = sum(r for r, _, _ in tables)
        size = sum(b for _, _, b in tables)
        looked_up = sum(k for _, k, _ in tables)
        # The eager optimizers' time, by the tables' share of the parameters' bytes: their
        # update of every row (the DLRM's SGD over its tables).
        params = sum(
            _bytes(n) for n in g.nodes if n.op == "placeholder" and "_parameters_" in n.name
        )
        update_s = (real.optimizer_s or 0.0) * min(size / params, 1.0) if params else 0.0
        step_s = min(ops_s + update_s, wall)
        what = (
            f"{cid} looks up {len(tables)} embedding table{'s' if len(tables) > 1 else ''} of "
            f"{rows:,} rows in all ({human_bytes(size)}) with dense gradients (`sparse=False`): "
            f"each step's backward writes a gradient as large as the tables, and the optimizer "
            f"updates every row, for {looked_up:,} looked-up indices a step."
            + (
                f" The embedding ops take {ops_s * 1e3:.3f} ms a step and the optimizers' "
                f"update of the tables {update_s * 1e3:.3f} ms ({step_s / wall:.0%} of the step "
                "together)."
                if step_s > 0
                else ""
            )
        )
        found.append(
            Finding(
                kind="dense_embedding_grads",
                what=what,
                key=f"dense_embedding_grads:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=step_s or None,
                    share=step_s / wall if step_s else None,
                    bytes=size,
                    note="the embedding ops' measured time per step, and the eager "
                    "optimizers' by the tables' share of the parameters' bytes",
                ),
                fixes=(remedy("sparse_embedding_grads").fix(),),
            )
        )
    return found


def _embedding_ops_of(compile_id: str) -> Callable[[str, str], bool]:
    return lambda op, cid: "embedding" in op and cid == compile_id


def _dense_table(node: Node, by_name: dict[str, Node]) -> tuple[int, int, int] | None:
    """(rows, indices looked up, bytes) of a dense-gradient lookup of a large table."""
    kind = str(node.target).rsplit(".", 1)[-1]
    if node.op != "call_function" or kind not in _SPARSE_AT or len(node.inputs) < 2:
        return None
    index, weight = (by_name.get(name) for name in node.inputs[:2])
    if weight is None or "_parameters_" not in weight.name or not weight.tensors:
        return None
    if index is None or not index.tensors or _sparse(node, _SPARSE_AT[kind]):
        return None
    shape = weight.tensors[0].shape
    try:
        rows, width = int(shape[0]), math.prod(int(s) for s in shape[1:])
        indices = math.prod(int(s) for s in index.tensors[0].shape)
    except (ValueError, IndexError):  # symbolic sizes
        return None
    if rows < _LEAST_ROWS or indices * _ROWS_PER_LOOKUP > rows:
        return None
    return rows, indices, rows * width * _BYTES.get(weight.tensors[0].dtype, 4)


def _bytes(node: Node) -> int:
    try:
        meta = node.tensors[0]
        return math.prod(int(x) for x in meta.shape) * _BYTES.get(meta.dtype, 4)
    except (ValueError, IndexError):
        return 0


def _sparse(node: Node, position: int) -> bool:
    text = node.args_text.replace(" ", "")
    if "sparse=True" in text:
        return True
    args = [a for a in text.split(",") if "=" not in a]
    return len(args) > position and args[position] == "True"
