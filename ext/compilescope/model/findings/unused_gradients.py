"""Gradients the backward computes that no optimizer uses: a model run only for its outputs (a teacher, a frozen encoder) with autograd on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from ..compile import Compile
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


def unused_gradient_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose backward ran in the steps, beside the one whose parameters the optimizers
    update: when the optimizers hold as many parameter tensors as one compile's forward takes,
    the others' backward computes gradients nobody steps (the third blind round's distillation
    teacher run with grad: 1.66x under `torch.no_grad()`). Their backward's measured time is
    the cost."""
    stepped = sum(o.params for o in real.optimizers)
    backward = {g.compile_id: g.seconds for g in real.graphs if g.role == "backward"}
    compiles = [c for c in capture if str(c.id) in backward]
    if stepped and len(compiles) == 1:
        return _untrained_in_one(capture, real, compiles[0], stepped, backward)
    if not stepped or len(compiles) < 2:
        return []
    params = {str(c.id): _parameters(c) for c in compiles}
    trained = [cid for cid, n in params.items() if n == stepped]
    if len(trained) != 1:
        return []  # which compile the optimizers train is not told by the counts
    extra = [c for c in compiles if str(c.id) not in trained and params[str(c.id)]]
    if not extra:
        return []
    wall = real.compiled.median_s
    found = []
    for c in extra:
        seconds = backward[str(c.id)]
        what = (
            f"{c.id}'s backward computes gradients for {params[str(c.id)]} parameter tensors "
            f"that no optimizer updates ({seconds * 1e3:.3f} ms a step, {seconds / wall:.0%}): "
            f"your optimizers step {stepped}, the parameters of {trained[0]}. A model run only "
            "for its outputs (a teacher, a frozen encoder, a reference model) runs with autograd "
            "on: its forward saves activations and the backward goes through it."
        )
        found.append(
            Finding(
                kind="unused_gradients",
                what=what,
                key=f"unused_gradients:{c.id}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(str(c.id),),
                cost=Cost(
                    step_s=seconds,
                    share=seconds / wall,
                    launches=_backward_launches(real, str(c.id)) or None,
                    note="that compile's backward time per step",
                ),
                fixes=(remedy("frozen_without_grad").fix(),),
            )
        )
    return found


def _parameters(c: Compile) -> int:
    """The parameter tensors the compile's Dynamo graph takes (`L['self']...parameters...`)."""
    g = c.graph("dynamo_output_graph")
    if g is None:
        return 0
    return sum(1 for n in g.nodes if n.op == "placeholder" and "_parameters_" in n.name)


# A backward computing at least this many times the gradients the optimizers step, and this many
# more: a part of the model left trainable by mistake (a pretrained backbone under a new head).
_MANY_TIMES = 2
_AT_LEAST = 4


def _untrained_in_one(
    capture: Capture, real: RealSteps, c: Compile, stepped: int, backward: dict[str, float]
) -> list[Finding]:
    """One compiled model whose backward computes gradients for far more tensors than the
    optimizers step (the fourth blind round's ResNet-50 with a new head, the backbone still
    requiring grad: 161 gradients for 2 stepped, 2.41x frozen). Estimated as the backward's
    time by the share of gradients it computes for nothing: the backward through the layers
    they belong to is work for them too."""
    grads = _gradients(c)
    if grads < _MANY_TIMES * stepped or grads - stepped < _AT_LEAST:
        return []
    unused = grads - stepped
    seconds = backward[str(c.id)] * unused / grads
    wall = real.compiled.median_s
    what = (
        f"{c.id}'s backward computes {grads} gradients, but your optimizers step {stepped} "
        f"parameter tensors: {unused} gradients, and the backward through the layers they belong "
        f"to, are computed and never used (about {seconds * 1e3:.3f} ms a step, "
        f"{seconds / wall:.0%}: the backward's time by that share of its gradients). Parameters "
        "you do not train (a pretrained backbone under a new head) still require grad."
    )
    return [
        Finding(
            kind="unused_gradients",
            what=what,
            key=f"unused_gradients:{c.id}",
            user=frame_places(frame_of(capture, c), capture)[0],
            compile_ids=(str(c.id),),
            cost=Cost(
                step_s=seconds,
                share=seconds / wall,
                launches=_backward_launches(real, str(c.id)) * unused / grads or None,
                note="the backward's time by the share of its gradients no optimizer steps",
            ),
            fixes=(remedy("freeze_untrained").fix(),),
        )
    ]


def _gradients(c: Compile) -> int:
    """The gradients the compile's backward returns (its output's non-None entries)."""
    g = c.graph("aot_backward_graph")
    if g is None:
        return 0
    out = next((n for n in g.nodes if n.op == "output"), None)
    return len(out.inputs) if out is not None else 0


def _backward_launches(real: RealSteps, compile_id: str) -> float:
    return sum(
        k.calls_per_run for k in real.kernels if k.compile_id == compile_id and k.role == "backward"
    )
