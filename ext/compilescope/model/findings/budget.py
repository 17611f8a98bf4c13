"""Speed findings that follow from the step budget: what ran outside the compiled graphs, hand-written attention, time nothing places."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..capture import Capture
from ..compile import Compile
from ..graph import Graph, Node
from ..measured.step_budget import UNEXPLAINED_SHARE, device_scale, step_budget
from .catalog import remedy
from .parts import Cost, Finding, Fix
from .perf import SHOWN_SHARE

if TYPE_CHECKING:
    from ..measured.timing import OutsideWork, RealSteps


def budget_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """A finding for each part of the budget outside the compiled graphs that takes at least
    SHOWN_SHARE of the step, for hand-written attention in a compiled graph, and for what the
    split could not place (the optimizer and host syncs have findings of their own)."""
    step = real.compiled.median_s
    found: list[Finding | None] = []
    if not real.graphs and not real.kernels and not any(c.kernels for c in capture):
        found.append(_not_compiled(capture, step))
    # Each work's time as the budget holds it (scaled to the step where the device parts add
    # up past it: a collective's kernel also spins while it waits for the other ranks).
    shrink = device_scale(real)
    found += [
        _work_finding(replace(w, seconds=w.seconds * shrink), step)
        for w in real.outside
        if w.seconds * shrink / step >= SHOWN_SHARE
    ]
    found += _attention_findings(capture, real)
    rest = [
        p for p in step_budget(real) if p.kind == "unexplained" and p.share >= UNEXPLAINED_SHARE
    ]
    if rest and real.graphs:
        p = rest[0]
        found.append(
            Finding(
                kind="unplaced_time",
                what=f"{p.seconds * 1e3:.3f} ms of the {step * 1e3:.3f} ms step ({p.share:.0%}) is "
                f"not placed by the split ({p.detail}); no remedy is known without knowing what "
                "it is.",
                key="unplaced_time",
                cost=Cost(step_s=p.seconds, share=p.share, note="time per step the parts miss"),
                fixes=(remedy("unplaced_time").fix(),),
            )
        )
    return [f for f in found if f is not None]


def _not_compiled(capture: Capture, step: float) -> Finding:
    """No compiled kernel ran in the steps: nothing compiled, or every compiled frame broke
    before a graph (DDP's own forward breaks, and the torch.nn modules it calls are no frames
    Dynamo compiles on their own: `torch.compile(DDP(nn.Sequential(...)))` compiles nothing)."""
    fixes: tuple[Fix, ...] = (remedy("compile_model").fix(),)
    if not capture.compiles:
        what = (
            f"Nothing was compiled inside the block: the steps ({step * 1e3:.3f} ms each) ran "
            "as eager PyTorch. If the model was compiled before the block, "
            "`capturing(reset=True)` shows it; otherwise compile it."
        )
    elif graphs := uncompiled_graphs(capture):
        # A graph with ops that no backend turned into code: backend="eager" (Dynamo's graph
        # run op by op) or "aot_eager" (the same after AOTAutograd), left in after bisecting.
        ops = sum(_ops(c) for c in graphs)
        what = (
            f"torch.compile captured {len(graphs)} graph{'s' if len(graphs) != 1 else ''} "
            f"({ops} ops) but generated no kernel from {'them' if len(graphs) != 1 else 'it'}: "
            'the backend ran the graph op by op, as a debugging backend (`backend="eager"` '
            'or `"aot_eager"`) does. The steps '
            f"({step * 1e3:.3f} ms each) ran as eager PyTorch with Dynamo's guards on top."
        )
        fixes = (remedy("default_backend").fix(),)
    else:
        frames = len({(c.id.frame_id, c.id.rank) for c in capture})
        what = (
            f"torch.compile ran on {frames} frame{'s' if frames != 1 else ''} but no compiled "
            f"kernel ran in the steps ({step * 1e3:.3f} ms each): every frame it compiled broke "
            "or made an empty graph, and the model's code ran eagerly."
        )
        if any(
            _DDP_FILE in c.frame.file or "distributed.py" in c.frame.file for c in capture
        ) or any(
            _DDP_FILE in p.file
            for c in capture
            for b in c.breaks_and_fallbacks
            for p in b.user_stack
        ):
            what += (
                " Dynamo breaks out of DistributedDataParallel's forward, and the torch.nn "
                "modules it then calls are not compiled on their own."
            )
            fixes = (remedy("ddp_compile_inside").fix(), *fixes)
    return Finding(
        kind="not_compiled",
        what=what,
        key="not_compiled",
        cost=Cost(step_s=step, share=1.0, note="the whole step, uncompiled"),
        fixes=fixes,
    )


_DDP_FILE = "torch/nn/parallel/distributed.py"


def uncompiled_graphs(capture: Capture) -> list[Compile]:
    """Compiles whose Dynamo graph has ops but no backend code: a debugging backend's."""
    return [c for c in capture if _ops(c) and not c.output_code]


def _ops(c: Compile) -> int:
    """Ops in a compile's Dynamo graph (0 where it has none)."""
    return sum(g.op_count for g in c.graphs.get("dynamo_output_graph", ()))


def _work_finding(w: OutsideWork, step: float) -> Finding | None:
    share = w.seconds / step
    cost = Cost(step_s=w.seconds, share=share, note="device time per step, outside the graphs")
    per = f"{w.seconds * 1e3:.3f} ms per step ({share:.0%} of the step), {w.calls:g} per step"
    if w.kind == "copy" and w.name.startswith("host-to-device"):
        pageable = "pageable" in w.name
        what = (
            f"Host-to-device copies outside the compiled graphs"
            f"{' from pageable memory' if pageable else ''}: {per}."
            + (
                " A pageable copy is staged by the driver and the host waits for it."
                if pageable
                else ""
            )
        )
        keys = ("pinned_memory", "data_on_device") if pageable else ("data_on_device",)
        return Finding(
            kind="host_copies",
            what=what,
            key=f"host_copies:{w.name}",
            cost=cost,
            fixes=tuple(remedy(k).fix() for k in keys),
        )
    if w.kind == "copy" and w.name.startswith("device-to-host"):
        return Finding(
            kind="host_copies",
            what=f"Device-to-host copies every step ({w.name}): {per}; each makes the host wait "
            "for the device.",
            key=f"host_copies:{w.name}",
            cost=cost,
            fixes=(remedy("avoid_syncs").fix(),),
        )
    if w.kind == "collective":
        return Finding(
            kind="exposed_collectives",
            what=f"The step waits for the collective `{w.name}`: {per} exposed (not hidden "
            f"under other kernels; {w.overlapped_s * 1e3:.3f} ms more ran overlapped).",
            key=f"exposed_collectives:{w.name}",
            cost=cost,
            fixes=(remedy("ddp_bucket").fix(), remedy("ddp_no_sync").fix()),
        )
    if w.kind == "eager_op" and not w.name.startswith(("aten::_foreach", "aten::_fused")):
        return Finding(
            kind="eager_ops_outside",
            what=f"`{w.name}` runs eagerly{f' in {w.where}' if w.where else ''}, outside every "
            f"compiled graph: {per}.",
            key=f"eager_ops_outside:{w.name}:{w.where}",
            cost=cost,
            fixes=(remedy("compile_the_rest").fix(),),
        )
    return None  # the optimizer's own ops (its finding), memsets and other copies: in the budget


# Dynamo graph targets of the hand-written attention pattern: softmax(q @ kᵀ ...) @ v.
_MATMUL = ("operator.matmul", "torch.matmul", "torch.bmm", "torch.einsum", "matmul", "bmm")
_SOFTMAX = ("torch.softmax", "torch.nn.functional.softmax", "softmax", "torch.Tensor.softmax")
_SDPA = "scaled_dot_product_attention"


def hand_written_attention(graph: Graph) -> list[Node]:
    """Softmax nodes of a Dynamo graph whose input comes from a matmul (through a few scale,
    mask or add ops) and whose output goes into a matmul (through dropout, say): attention
    written by hand. None where the graph already calls scaled_dot_product_attention."""
    nodes = {n.name: n for n in graph.nodes}
    if any(_SDPA in n.target for n in graph.nodes):
        return []
    users: dict[str, list[Node]] = {}
    for n in graph.nodes:
        for i in n.inputs:
            users.setdefault(i, []).append(n)

    def near(start: Node, step: object, hops: int) -> bool:
        frontier = [start]
        for _ in range(hops):
            nxt = []
            for n in frontier:
                for m in step(n):  # type: ignore[operator]
                    if m.target in _MATMUL:
                        return True
                    nxt.append(m)
            frontier = nxt
        return False

    def ins(n: Node) -> list[Node]:
        return [nodes[i] for i in n.inputs if i in nodes]

    return [
        n
        for n in graph.nodes
        if n.target in _SOFTMAX and near(n, ins, 4) and near(n, lambda m: users.get(m.name, []), 3)
    ]


def _attention_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    step = real.compiled.median_s
    found = []
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        softmaxes = hand_written_attention(graph) if graph is not None else []
        if not softmaxes:
            continue
        cid = str(c.id)
        # What attention costs of the step: the softmax kernels and the batched matmuls of
        # this compile (forward and backward), as the real steps timed them.
        attention = [
            k
            for k in real.kernels
            if k.compile_id == cid and any(w in k.kernel for w in ("softmax", "bmm", "amax"))
        ]
        seconds = sum(k.time.median_s * k.calls_per_run for k in attention)
        share = seconds / step if step > 0 else 0.0
        place = softmaxes[0].source
        found.append(
            Finding(
                kind="hand_written_attention",
                what=f"Attention written by hand (softmax between two matmuls, "
                f"{len(softmaxes)} in compile {cid}): its softmax and batched-matmul kernels "
                f"take {seconds * 1e3:.3f} ms per step ({share:.0%} of the step). A fused "
                "attention kernel never writes the score matrix to memory.",
                key=f"hand_written_attention:{cid}",
                user=place,
                compile_ids=(cid,),
                cost=Cost(step_s=seconds, share=share, note="the softmax and bmm kernels' time"),
                fixes=(remedy("sdpa").fix(place),),
            )
        )
    return found
