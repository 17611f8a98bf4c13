"""A check shared by the launchers: can Triton run this kernel on these tensors' device?"""

from __future__ import annotations

from typing import Any

import torch
from triton.runtime import JITFunction


def check_launchable(kernel: Any, *tensors: torch.Tensor) -> None:
    """Raise a clear error where launching `kernel` on `tensors` would fail deep inside Triton."""
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"tensors on different devices: {sorted(map(str, devices))}")
    # A compiled kernel (JITFunction) needs a GPU; under TRITON_INTERPRET=1 @triton.jit returns
    # an InterpretedFunction instead, which runs on CPU tensors. The variable is read when the
    # kernel is decorated, that is when its module is first imported, so it must be set before.
    if isinstance(kernel, JITFunction) and devices == {torch.device("cpu")}:
        raise RuntimeError(
            "CPU tensors: Triton runs these kernels on a CPU only through its interpreter; "
            "set TRITON_INTERPRET=1 before importing compilescope_kernels (or use a GPU)"
        )
