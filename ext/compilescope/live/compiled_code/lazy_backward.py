"""Inductor's kernel -> node maps for a backward lowered lazily, at its first call (torch's default)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

# Marks the provenance maps as ours, between lazily lowered backwards.
_LAZY_BACKWARD = -2
# torch/_inductor/debug.py's maps of one compile, reset by reset_provenance_globals.
_MAPS = (
    "_inductor_post_to_pre_grad_nodes",
    "_inductor_triton_kernel_to_post_grad_node_info",
    "_inductor_kernel_stack_trace",
)


def lazy_backward_provenance_starts() -> None:
    """Called as each graph is lowered (a post-grad pass): a backward lowered lazily, at its
    first call (torch/_functorch/_aot_autograd/graph_compile.py, Note [Backward graph lazy
    lowering]), is lowered outside compile_fx's reset_provenance_globals, where Inductor
    records kernel -> node maps but logs none (torch/_inductor/debug.py,
    dump_inductor_provenance_info needs _pre_grad_graph_id, None there). Mark the maps and
    start them afresh, so that this graph's kernels, and only its, are logged. Inside
    compile_fx (a forward, or a backward lowered with it) torch's own values stand."""
    try:
        import torch._inductor.debug as debug
    except ImportError:  # pragma: no cover - torch API drift: backward kernels lose node maps
        return
    if getattr(debug, "_pre_grad_graph_id", -1) not in (None, _LAZY_BACKWARD):
        return
    debug._pre_grad_graph_id = _LAZY_BACKWARD
    for name in _MAPS:
        if isinstance(getattr(debug, name, None), dict):
            setattr(debug, name, {})


@contextlib.contextmanager
def lazy_backward_provenance() -> Iterator[None]:
    """Inductor's provenance globals as they were before the capture, afterwards."""
    names = ("_pre_grad_graph_id", *_MAPS)
    try:
        import torch._inductor.debug as debug
    except ImportError:  # pragma: no cover - torch API drift
        yield
        return
    saved = {name: getattr(debug, name) for name in names if hasattr(debug, name)}
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(debug, name, value)
