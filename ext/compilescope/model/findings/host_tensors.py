"""Tensors made on the CPU every step and copied to the GPU: the host's time in tensor factories, which made on the device cost neither."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .catalog import remedy
from .parts import Cost, Finding

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

# ATen's tensor factories: on the CPU, a tensor made each step for the GPU is made, then copied.
_FACTORIES = frozenset({
    "aten::randn", "aten::rand", "aten::randint", "aten::randperm", "aten::normal",
    "aten::normal_", "aten::uniform_", "aten::random_", "aten::bernoulli", "aten::bernoulli_",
    "aten::empty", "aten::zeros", "aten::ones", "aten::full", "aten::arange", "aten::linspace",
    "aten::eye", "aten::randn_like", "aten::rand_like", "aten::zeros_like", "aten::ones_like",
})  # fmt: skip


def host_tensor_findings(real: RealSteps) -> list[Finding]:
    """Where the step copies tensors to the device and a function of the user's spends the
    host's time making tensors (`torch.randn(shape)`, then `.to(device)`): that time, as a
    share of the profiled steps (the third blind round's diffusion noise: 4.5x made on the
    GPU, where it read as launch- or host-bound by a hair either way)."""
    copies = [w for w in real.outside if w.kind == "copy" and w.name.startswith("host-to-device")]
    if not copies or real.split_wall is None:
        return []
    profiled = real.split_wall.median_s
    places = []
    for h in real.host_time:
        made = [op for op in h.ops if op.name in _FACTORIES]
        if made:
            places.append((h.where, sum(op.seconds for op in made), made))
    if not places or profiled <= 0:
        return []
    seconds = sum(s for _, s, _ in places)
    share = min(seconds / profiled, 1.0)
    where, _, made = max(places, key=lambda p: p[1])
    calls = sum(w.calls for w in copies)
    wall = real.compiled.median_s
    what = (
        f"The host makes tensors every step ({', '.join(f'`{op.name}`' for op in made)} in "
        f"`{where}`): {share:.0%} of the profiled steps' time, while the GPU waits, and the step "
        f"copies {calls:.0f} tensor{'' if round(calls) == 1 else 's'} a step to the GPU. Made "
        "on the device, they cost neither."
    )
    return [
        Finding(
            kind="host_tensors",
            what=what,
            key="host_tensors",
            cost=Cost(
                step_s=share * wall,
                share=share,
                note="the host's time in tensor factories, as a share of the profiled steps",
            ),
            fixes=(remedy("create_on_device").fix(),),
        )
    ]
