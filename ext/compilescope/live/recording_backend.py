"""The backend a capture compiles with: the real one, plus what only live objects know."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from . import torch_bridge
from .timing.inputs import input_layout, input_moments, input_values
from .timing.measure import RecordedGraph

if TYPE_CHECKING:
    import torch

    from .session import CaptureSession


class RecordingBackend:
    """Wraps the real backend to keep what only live objects know (module paths of nodes).

    torch keeps every backend it has seen (torch._dynamo.eval_frame.cached_backends), so this
    holds its session weakly: a finished capture must not live as long as the process.
    """

    def __init__(self, inner: torch_bridge.Backend, session: CaptureSession) -> None:
        self.inner = inner
        self._session = weakref.ref(session)

    def __call__(
        self, graph_module: torch.fx.GraphModule, example_inputs: list[object]
    ) -> torch_bridge.CompiledFn:
        compile_id = torch_bridge.current_compile_id()
        session = self._session()
        if compile_id is not None and session is not None:
            session.heard_module_paths(compile_id, torch_bridge.module_paths(graph_module))
        compiled = self.inner(graph_module, example_inputs)
        if compile_id is not None and session is not None and session.timings:
            session.keep_to_time(
                compile_id,
                RecordedGraph(
                    graph_module,
                    compiled,
                    input_layout(example_inputs),
                    torch_bridge.grad_enabled(),
                    input_values(example_inputs),
                    input_moments(example_inputs),
                ),
            )
        return compiled
