"""A capture changes nothing in what it measures: the same graphs, breaks and compiles as a plain run.

Each case runs one training loop twice in this process, plainly (with a handler of the test's
own on torch's structured trace) and inside `capturing()`, and compares what Dynamo did.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import re

import compilescope
import pytest
import torch
from compilescope.model.compile import OWN_HOOK_STATUS
from torch._dynamo.utils import counters

pytestmark = pytest.mark.torch

STEPS = 30  # enough for a window of real steps: 2 settling, 10 timed, 10 split, 1 + 5 eager
GRAPH_KINDS = ("dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_joint_graph")


def _model_and_optimizer(optimizer: str):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    if optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return model, opt


def eager_optimizer(optimizer: str):
    model, opt = _model_and_optimizer(optimizer)
    compiled = torch.compile(model, backend="aot_eager")

    def loop():
        for i in range(STEPS):
            compiled(torch.randn(4, 16, generator=torch.Generator().manual_seed(i))).pow(
                2
            ).mean().backward()
            opt.step()
            opt.zero_grad()

    return model, loop


def compiled_optimizer_step(optimizer: str):
    model, opt = _model_and_optimizer(optimizer)
    step = torch.compile(opt.step, backend="aot_eager")

    def loop():
        for i in range(STEPS):
            model(torch.randn(4, 16, generator=torch.Generator().manual_seed(i))).pow(
                2
            ).mean().backward()
            step()
            opt.zero_grad()

    return model, loop


def compiled_training_step(optimizer: str, compiled_autograd: bool = False):
    model, opt = _model_and_optimizer(optimizer)

    @torch.compile(backend="aot_eager")
    def train(x):
        model(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()

    def loop():
        settings = (
            torch._dynamo.config.patch(compiled_autograd=True)
            if compiled_autograd
            else contextlib.nullcontext()
        )
        with settings:
            for i in range(STEPS):
                train(torch.randn(4, 16, generator=torch.Generator().manual_seed(i)))

    return model, loop


def compiled_autograd_step(optimizer: str):
    return compiled_training_step(optimizer, compiled_autograd=True)


class _Graphs(logging.Handler):
    """The test's own listener: Dynamo's and AOTAutograd's graphs, as torch logged them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.graphs: list[tuple[str, str]] = []
        self.compile_ids: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None) or {}
        if metadata.get("frame_id") is not None and "compiled_autograd_id" not in metadata:
            self.compile_ids.append(_compile_id(metadata))
        for kind in GRAPH_KINDS:
            if kind in metadata:
                self.graphs.append((kind, _plain(getattr(record, "payload", "") or "")))


def _compile_id(metadata: dict) -> str:
    frame, attempt = metadata.get("frame_id"), metadata.get("attempt") or 0
    return f"{frame}/{metadata.get('frame_compile_id')}" + (f"_{attempt}" if attempt else "")


def _plain(payload: str) -> str:
    # Graph names carry a counter that runs on across the process's compiles.
    return re.sub(r"GraphModule\w*|\b\w*_\d+\b", "_", payload)


def _dynamo_counts() -> dict[str, int]:
    # Not counters["frames"]: it counts every Python frame Dynamo's callback looks at, the
    # standard library's logging and json frames included, also those that torch calls on a
    # structured-trace listener's behalf (a frame that compiles nothing). Compiles are compared
    # by their compile ids instead, and frames Dynamo gave up on (left to eager) by count.
    return {
        "frames_failed": counters["frames"]["total"] - counters["frames"]["ok"],
        "graph_breaks": sum(counters["graph_break"].values()),
        "unique_graphs": counters["stats"]["unique_graphs"],
        "calls_captured": counters["stats"]["calls_captured"],
    }


def _run(workload, optimizer: str, capture: bool):
    torch._dynamo.reset()
    counters.clear()
    model, loop = workload(optimizer)
    if capture:
        with compilescope.capturing() as cap:
            loop()
        graphs = [
            (kind, _plain(g.text))
            for c in cap.capture
            for kind in GRAPH_KINDS
            for g in c.graphs.get(kind, ())
        ]
        result = cap.capture
        compile_ids = sorted(str(c.id) for c in result if not str(c.id).startswith("!"))
    else:
        logger = logging.getLogger("torch.__trace")
        handler, level = _Graphs(), logger.level
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        try:
            loop()
        finally:
            logger.removeHandler(handler)
            logger.setLevel(level)
        graphs, result = handler.graphs, None
        compile_ids = sorted(set(handler.compile_ids))
    weights = [p.detach().clone() for p in model.parameters()]
    counts = {**_dynamo_counts(), "compile_ids": compile_ids}
    return counts, sorted(graphs), weights, result


@pytest.mark.parametrize(
    "workload,optimizer",
    [
        (eager_optimizer, "adamw"),
        (compiled_optimizer_step, "adamw"),
        (compiled_optimizer_step, "sgd"),
        (compiled_training_step, "sgd"),
        (compiled_autograd_step, "sgd"),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_a_capture_compiles_what_a_plain_run_compiles(workload, optimizer):
    plain_counts, plain_graphs, plain_weights, _ = _run(workload, optimizer, capture=False)
    counts, graphs, weights, capture = _run(workload, optimizer, capture=True)
    assert counts == plain_counts
    assert graphs == plain_graphs and graphs  # graph for graph, as torch logged them
    # Nothing of ours was compiled, and torch never left a frame to eager because of us.
    ours = pathlib.Path(compilescope.__file__).parent
    assert not [c for c in capture if pathlib.Path(c.frame.file).is_relative_to(ours)]
    assert not [b for c in capture for b in c.graph_breaks if b.at_own_hook]
    assert not [c for c in capture if c.status == OWN_HOOK_STATUS]
    # The steps were still followed: the window of real steps ran.
    real = capture.timings.real_steps
    assert real is not None and real.compiled.repeats == 10, capture.timings.real_steps_note
    # The user's training did the same arithmetic (the eager window runs the same code).
    for a, b in zip(weights, plain_weights, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_the_step_hook_is_heard_from_inside_a_compiled_graph():
    # Where the optimizer's post hooks are traced into the graph (no break in torch's step
    # wrapper, as for a fused CUDA optimizer), the compiled frame itself calls our listener
    # after its graph: once per call, with no break and nothing added to the graph.
    from compilescope.live.timing import step_boundaries

    torch._dynamo.reset()
    counters.clear()
    heard = []

    @torch.compile(backend="eager", fullgraph=True)
    def step(x):
        y = x * 2
        step_boundaries._post_hook(None, (), {})
        return y + 1

    with step_boundaries.hearing_steps(lambda: heard.append(1)):
        for _ in range(3):
            step(torch.ones(3))
    assert len(heard) == 3 and not step_boundaries.unheard
    assert not counters["graph_break"] and counters["stats"]["calls_captured"] == 2
    step(torch.ones(3))  # outside: the listener is gone
    assert len(heard) == 3


def _ours_registered() -> list[str]:
    """Everything of compilescope's a capture puts into torch, still there."""
    from compilescope.live.timing import step_boundaries
    from torch.optim import optimizer

    left = []
    hooks = [
        *optimizer._global_optimizer_pre_hooks.values(),
        *optimizer._global_optimizer_post_hooks.values(),
    ]
    if step_boundaries.registered() or [h for h in hooks if "compilescope" in h.__module__]:
        left.append("optimizer step hooks")
    if torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
        left.append("saved-tensor hooks")
    if torch._dynamo.eval_frame._stance.stance != "default":
        left.append("compile stance")
    handlers = logging.getLogger("torch.__trace").handlers
    if [h for h in handlers if "compilescope" in type(h).__module__]:
        left.append("trace handler")
    if any("compilescope" in type(f).__module__ for lg in _torch_loggers() for f in lg.filters):
        left.append("log filters")
    import os

    if "TEARDOWN_CUPTI" in os.environ:
        left.append("TEARDOWN_CUPTI")
    config = torch._inductor.config
    if type(config.custom_partitioner_fn).__module__.startswith("compilescope"):
        left.append("custom partitioner")
    return left


def _torch_loggers():
    return [
        logging.getLogger(name)
        for name in logging.root.manager.loggerDict
        if name.startswith("torch")
    ]


def test_nothing_of_ours_remains_registered_after_a_capture_with_a_window_of_steps():
    assert _ours_registered() == []
    model, loop = eager_optimizer("adamw")
    with compilescope.capturing() as cap:
        loop()
    assert cap.capture.timings.real_steps is not None  # the window and eager steps ran
    assert _ours_registered() == []


def test_code_compiled_before_the_block_still_has_its_steps_timed():
    # A notebook cell run twice: the model was compiled by the first run.
    torch._dynamo.reset()
    model, loop = eager_optimizer("sgd")
    loop()  # compiled here, before the block
    with compilescope.capturing() as cap:
        loop()
    capture = cap.capture
    assert len(capture) == 0 and "compiled before" in capture.note
    assert "reset=True" in capture.note and "note: nothing compiled" in str(capture)
    real = capture.timings.real_steps
    assert real is not None and real.compiled.repeats == 10 and real.eager is not None
    assert "compiled before" in real.note and not real.graphs  # timed whole, not split
    # reset=True captures the compile again.
    with compilescope.capturing(reset=True) as again:
        loop()
    assert len(again.capture) > 0 and not again.capture.note
