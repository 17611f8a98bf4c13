"""What every layer shares: torch's stage names in pipeline order, and sizes and paths as people read them."""

from __future__ import annotations

from dataclasses import dataclass

# The graph kinds, named as torch names their trace events (newest torch first where renamed).
GRAPH_KINDS = (
    "dynamo_output_graph",
    "before_pre_grad_graph",
    "after_pre_grad_graph",
    "inductor_pre_grad_graph",
    "aot_joint_graph",
    # Inductor logs these around its joint-graph passes for an inference graph
    # (torch/_inductor/compile_fx.py), e.g. a recompile in eval mode, compiled autograd.
    "before_joint_graph",
    "after_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
    "before_post_grad_graph",
    "inductor_post_grad_graph",
    "compiled_autograd_graph",
    # Dynamo's DDPOptimizer (torch/_dynamo/backends/distributed.py) splits a DDP module's graph
    # at gradient-bucket boundaries: the split graph, then one graph per submodule.
    "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
)
# The reason compilescope's own hooks give torch.compiler.disable. A compiled optimizer step
# calls its post hooks, and Dynamo breaks the graph at a disabled one and says this reason in
# its message (torch >= 2.8, pytorch#150341): findings leave such a break out, since the code
# without compilescope has no such call.
OWN_HOOK_REASON = "compilescope's measuring hook, not part of the code"
# torch >= 2.6 logs the pre-grad graph as `after_pre_grad_graph`; older ones as this name.
KIND_ALIASES = {"inductor_pre_grad_graph": "after_pre_grad_graph"}


@dataclass(frozen=True)
class Stage:
    """A graph kind as shown: `label` in the view, `short` in one-line summaries (None: the
    summaries leave it out, as they do for the DDP graphs and the passes' before/after)."""

    kind: str
    label: str
    short: str | None = None


# The stages the view shows, in pipeline order.
STAGES = (
    Stage("dynamo_output_graph", "Dynamo graph", "dynamo"),
    Stage("optimize_ddp_split_graph", "DDP split"),
    Stage("optimize_ddp_split_child", "DDP subgraph"),
    Stage("aot_joint_graph", "AOT joint graph", "joint"),
    Stage("before_joint_graph", "joint graph before passes"),
    Stage("after_joint_graph", "joint graph after passes"),
    Stage("aot_forward_graph", "forward", "fwd"),
    Stage("aot_backward_graph", "backward", "bwd"),
    Stage("aot_inference_graph", "inference", "infer"),
    Stage("after_pre_grad_graph", "pre-grad"),
    Stage("inductor_post_grad_graph", "post-grad", "post_grad"),
    Stage("compiled_autograd_graph", "compiled autograd", "ca"),
)
# The stages one-line summaries count, with their short names.
SUMMARY_STAGES = tuple(s for s in STAGES if s.short)
STAGE_LABELS = {s.kind: s.label for s in STAGES}


def human_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def byte_scale(largest: float) -> tuple[str, int]:
    """The unit a chart's byte axis reads best in, for its largest value: ("MiB", 2**20)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if largest >= scale:
            return unit, scale
    return "KiB", 1024


def milliseconds(seconds: float) -> str:
    """0.0012345 -> '1.234 ms'."""
    return f"{seconds * 1e3:.3f} ms"


def short_path(path: str, keep: int = 2) -> str:
    """The last `keep` parts of a path: enough to recognise, short enough to read."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-keep:]) if len(parts) > keep else path
