"""How to compile: torch.compile's arguments, the partitioner, compiled autograd and timings."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import torch_bridge
from .trials import torch_partitioners


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: torch.compile's arguments plus the partitioner and compiled autograd."""

    backend: str | torch_bridge.Backend = "inductor"
    mode: str | None = None
    options: dict[str, Any] | None = None  # Inductor config, as torch.compile(options=...)
    dynamic: bool | None = None
    fullgraph: bool = False
    partitioner: str | None = None  # "min_cut" or "default"; None keeps the backend's own
    compiled_autograd: bool = False
    # Time each graph (forward and backward, eager vs compiled) and its kernels after the run.
    timings: bool | int = True
    # Time this many of the user's own steps once compiling has stopped (0: none), then
    # `eager_steps` more with the compiler's stance set to force_eager (live/timing/real_steps.py).
    real_steps: int = 10
    eager_steps: int = 5

    def backend_fn(self) -> torch_bridge.Backend:
        if self.partitioner not in (None, "min_cut", "default"):
            raise ValueError(
                f"partitioner must be 'min_cut' or 'default', not {self.partitioner!r}"
            )
        if self.backend == "inductor":
            return torch_bridge.inductor_backend(self.mode, self.options, self.dynamic)
        if self.mode is not None or self.options:
            raise ValueError("mode= and options= apply only to backend='inductor'")
        if self.backend == "aot_eager":
            # torch's aot_eager, built with a partitioner the partition lab can hear
            return torch_partitioners.aot_eager_backend(self.partitioner or "min_cut")
        if self.partitioner and self.backend != "inductor":
            raise ValueError(
                f"partitioner= applies to 'inductor' and 'aot_eager', not {self.backend!r}"
            )
        return torch_bridge.lookup_backend(self.backend)

    def settings(self) -> dict[str, object]:
        """Inductor settings to hold while compiling (the partitioner's, for inductor)."""
        settings: dict[str, object] = {}
        if self.backend == "inductor" and self.partitioner == "default":
            settings["custom_partitioner_fn"] = torch_partitioners.default_partitioner()
        # Timings need no Inductor setting: kernels are timed by wrapping the output module's
        # calls. (cpp.enable_kernel_profile slowed every C++ kernel's build, benchmark_kernel
        # made Inductor print "Compiled module path" at each compile.)
        return settings

    def running(
        self, wrap: Callable[[torch_bridge.Backend], torch_bridge.Backend] | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Around running the compiled code: compiled autograd, when asked for, with its backend
        passed through `wrap` (the capture records its graphs, to time them like the others)."""
        if self.compiled_autograd:
            backend = self.backend_fn() if self.backend == "inductor" else self.backend
            backend = torch_bridge.lookup_backend(backend)
            return torch_bridge.compiled_autograd(wrap(backend) if wrap else backend)
        return contextlib.nullcontext()
