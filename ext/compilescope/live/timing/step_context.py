"""What a timed step ran with: its optimizers (kind, flags, where built) and the speed settings."""

from __future__ import annotations

import linecache
import os
import re
import sys

import torch

from ...model.findings.parts import is_library
from ...model.measured.timing import OptimizerSeen, StepSettings


def optimizer_seen(optimizer: object) -> OptimizerSeen:
    """The optimizer as data; where the user's code builds it, read from the source of the
    first frame outside torch and installed packages that led to its step."""
    name = type(optimizer).__name__
    groups = getattr(optimizer, "param_groups", [])
    defaults = getattr(optimizer, "defaults", {}) or {}
    file, line, code = _built_at(name)
    return OptimizerSeen(
        name=name,
        params=sum(len(g.get("params", ())) for g in groups),
        foreach=defaults.get("foreach"),
        fused=defaults.get("fused"),
        eager=True,
        file=file,
        line=line,
        code=code,
    )


def _built_at(name: str) -> tuple[str, int, str]:
    frame = sys._getframe(1)
    while frame is not None and is_library(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "", 0, ""
    file = frame.f_code.co_filename
    built = re.compile(rf"\b{re.escape(name)}\s*\(")
    # An assignment of the call first (`opt = torch.optim.SGD(`): prose in a docstring that
    # names the class ("SGD (which supports sparse gradients)") is no place it is built.
    assigned = re.compile(rf"=\s*[\w.]*\b{re.escape(name)}\s*\(")
    lines = [
        (number, text)
        for number, text in enumerate(linecache.getlines(file), 1)
        if built.search(text) and not text.lstrip().startswith(("#", "import", "from"))
    ]
    for number, text in sorted(lines, key=lambda line: not assigned.search(line[1])):
        return file, number, text.strip()
    return file, 0, ""


def step_settings(gpu: bool) -> StepSettings:
    """The settings of the moment that decide how fast matmuls and convolutions run."""
    precision = torch.get_float32_matmul_precision()
    anomaly = bool(torch.is_anomaly_enabled())
    # Read before our own profiler starts (the split window): a profiler on now is the user's.
    profiler = _called(torch.autograd, "_profiler_enabled")
    deterministic = bool(
        _called(torch, "are_deterministic_algorithms_enabled") or torch.backends.cudnn.deterministic
    )
    if not gpu:
        return StepSettings(
            device_name="cpu",
            matmul_precision=precision,
            anomaly_detection=anomaly,
            profiler=profiler,
            deterministic=deterministic,
        )
    index = torch.cuda.current_device()
    major, _minor = torch.cuda.get_device_capability(index)
    return StepSettings(
        device_name=torch.cuda.get_device_name(index),
        tf32_capable=major >= 8,  # Ampere and later run TF32 on tensor cores
        matmul_precision=precision,
        cudnn_tf32=bool(torch.backends.cudnn.allow_tf32),
        cudnn_benchmark=bool(torch.backends.cudnn.benchmark),
        cudnn_enabled=bool(torch.backends.cudnn.enabled),
        anomaly_detection=anomaly,
        launch_blocking=os.environ.get("CUDA_LAUNCH_BLOCKING", "") not in ("", "0"),
        profiler=profiler,
        deterministic=deterministic,
        sdpa_math_only=_sdpa_math_only(),
    )


def _called(owner: object, name: str) -> bool | None:
    """owner.name() as a bool, None where this torch has no such function."""
    function = getattr(owner, name, None)
    return bool(function()) if callable(function) else None


def _sdpa_math_only() -> bool | None:
    """Every fused attention backend off (`sdpa_kernel(SDPBackend.MATH)`, `enable_flash_sdp(False)`
    and the like): scaled_dot_product_attention runs its unfused math. cudnn_sdp_enabled is
    read where this torch has it (2.2 and later)."""
    cuda = torch.backends.cuda
    fused = [_called(cuda, f) for f in ("flash_sdp_enabled", "mem_efficient_sdp_enabled")]
    fused.append(_called(cuda, "cudnn_sdp_enabled"))
    if fused[0] is None or fused[1] is None:
        return None
    return not any(fused)


__all__ = ["optimizer_seen", "step_settings"]
