"""Convolution findings on a GPU: cuDNN turned off, its algorithm choice (its auto-tuner) and the memory format."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding, Fix
from .perf import library_time

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


def convolution_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """cuDNN off, its auto-tuner off, and channels-first convolutions, by the convolutions'
    time."""
    if not real.device.startswith("cuda"):
        return []
    if real.settings is not None and real.settings.cudnn_enabled is False:
        # The auto-tuner and the memory format act through cuDNN: with it off, its own finding.
        return _cudnn_disabled(capture, real)
    return [*_cudnn_benchmark(capture, real), *_channels_last(capture, real)]


def _cudnn_disabled(capture: Capture, real: RealSteps) -> list[Finding]:
    step_s, ids = library_time(capture, real, lambda op, _: op.startswith("convolution"))
    if not ids:
        return []
    wall = real.compiled.median_s
    share = step_s / wall
    idle = max(wall - real.busy_s, 0.0) if real.busy_s is not None else None
    what = (
        f"cuDNN is turned off (`torch.backends.cudnn.enabled = False`): the convolutions run "
        f"torch's own kernels, an image at a time, {step_s * 1e3:.3f} ms per step "
        f"({share:.0%} of the step) on the device"
        + (
            f"; the GPU is idle {idle * 1e3:.3f} ms of the step ({idle / wall:.0%}), part of it "
            "between their many small launches (not measured apart)"
            if idle is not None and wall > 0
            else ""
        )
        + ". Turn it back on before judging the rest."
    )
    return [
        Finding(
            kind="cudnn_disabled",
            what=what,
            key="cudnn_disabled",
            compile_ids=ids,
            cost=Cost(step_s=step_s, share=share, note="convolutions' device time per step"),
            fixes=(remedy("cudnn_enabled").fix(),),
        )
    ]


def _cudnn_benchmark(capture: Capture, real: RealSteps) -> list[Finding]:
    s = real.settings
    if s is None or s.cudnn_benchmark is not False:
        return []  # on, or not read (captures before it was recorded)
    # The forward's convolutions and convolution_backward.
    step_s, ids = library_time(capture, real, lambda op, _: op.startswith("convolution"))
    if not ids:
        return []
    share = step_s / real.compiled.median_s
    what = (
        f"Convolutions (cuDNN) take {step_s * 1e3:.3f} ms per step ({share:.0%} of the step) "
        "with `torch.backends.cudnn.benchmark` off: cuDNN picks each convolution's algorithm by "
        "heuristics. With the auto-tuner on, it times the candidates once per input shape and "
        "keeps the fastest."
    )
    return [
        Finding(
            kind="cudnn_benchmark",
            what=what,
            key="cudnn_benchmark",
            compile_ids=ids,
            cost=Cost(step_s=step_s, share=share, note="convolutions' time per step"),
            fixes=(remedy("cudnn_benchmark").fix(),),
        )
    ]


def _channels_last(capture: Capture, real: RealSteps) -> list[Finding]:
    step_s, ids = library_time(
        capture, real, lambda op, cid: op.startswith("convolution") and _nchw(capture, cid)
    )
    if not ids:
        return []
    share = step_s / real.compiled.median_s
    what = (
        f"Convolutions run on NCHW (channels-first) tensors: {step_s * 1e3:.3f} ms per step "
        f"({share:.0%} of the step). cuDNN's tensor-core kernels often run faster "
        "channels-last, but not always: on a bf16 ResNet-style CNN on an H100 it measured only "
        "1.03x (benchmarks/RESULTS.md), so measure before keeping it."
    )
    return [
        Finding(
            kind="channels_last",
            what=what,
            key="channels_last",
            compile_ids=ids,
            cost=Cost(step_s=step_s, share=share, note="convolutions' time per step"),
            fixes=(
                Fix(
                    "code",
                    "channels-last memory format",
                    change="model = model.to(memory_format=torch.channels_last) and each batch "
                    "x = x.to(memory_format=torch.channels_last), before compiling",
                    tradeoff="layout conversions where a layer needs NCHW; the gain is largest "
                    "with bf16/fp16 on tensor cores",
                    source="PyTorch channels-last tutorial; performance tuning guide",
                ),
            ),
        )
    ]


def _nchw(capture: Capture, compile_id: str) -> bool:
    """Whether the compile's forward convolutions read 4-d inputs laid out channels-first."""
    try:
        c = capture[compile_id]
    except (KeyError, IndexError, ValueError):
        return False
    for g in c.graphs.get("inductor_post_grad_graph", ()):
        nodes = {n.name: n for n in g.nodes}
        for n in g.nodes:
            if "aten.convolution." not in n.target or not n.inputs:
                continue
            source = nodes.get(n.inputs[0])
            t = source.tensors[0] if source is not None and source.tensors else None
            if t is not None and len(t.stride) == 4:
                if all(x.isdigit() for x in t.stride):  # symbolic strides: not known
                    strides = [int(x) for x in t.stride]
                    return strides == sorted(strides, reverse=True) and strides[1] != 1
    return False
