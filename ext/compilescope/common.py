"""What every layer shares: torch's stages in pipeline order, and sizes and paths as people read them."""

from __future__ import annotations

from dataclasses import dataclass

# The reason compilescope's own hooks give torch.compiler.disable. A compiled optimizer step
# calls its post hooks, and Dynamo breaks the graph at a disabled one and says this reason in
# its message (torch >= 2.8, pytorch#150341): findings leave such a break out, since the code
# without compilescope has no such call.
OWN_HOOK_REASON = "compilescope's measuring hook, not part of the code"


@dataclass(frozen=True)
class Stage:
    """A graph kind, named as torch names its trace event, and what each part of compilescope
    does with it.

    `layer`: what made the graph ("dynamo", "ddp", "inductor", "aot", "compiled_autograd").
    `role`: what the graph is within its layer ("captured", "forward", "before pass", ...).
    `label`: its name in the view ("": the view leaves it out); `short`: in one-line summaries
    (None: they leave it out, as they do for the DDP graphs and the passes' before/after).
    `runs`: the graph its layer hands on, what runs: ranks compare these, and look for
    collectives in the latest layer's. `names`: whose node names it keeps ("dynamo" or "aot"),
    where module paths are inferred for its nodes (views/explorer/module_groups.py; None: not inferred).
    `pictured`: drawn in the script-free fallback. `saved`: shown with the partition's saved
    tensors. `logged`: a torch event (the partition is compilescope's, forward | backward).
    `alias_of`: the newer name of the same graph.
    """

    kind: str
    layer: str
    role: str
    label: str = ""
    short: str | None = None
    runs: bool = False
    names: str | None = None
    pictured: bool = False
    saved: bool = False
    logged: bool = True
    alias_of: str | None = None


# Every stage, in pipeline order: the view's tabs, the summaries, the rank comparison and the
# module-path inference all go in this order.
STAGES = (
    Stage("dynamo_output_graph", "dynamo", "captured", "Dynamo graph", "dynamo", runs=True,
          names="dynamo", pictured=True),
    # Dynamo's DDPOptimizer (torch/_dynamo/backends/distributed.py) splits a DDP module's graph
    # at gradient-bucket boundaries: the split graph, then one graph per submodule.
    Stage("optimize_ddp_split_graph", "ddp", "split", "DDP split", runs=True),
    Stage("optimize_ddp_split_child", "ddp", "split part", "DDP subgraph"),
    Stage("before_pre_grad_graph", "inductor", "before pass", names="dynamo"),
    Stage("after_pre_grad_graph", "inductor", "pre-grad", "pre-grad", names="dynamo"),
    # torch >= 2.6 logs the pre-grad graph as `after_pre_grad_graph`; older ones as this name.
    Stage("inductor_pre_grad_graph", "inductor", "pre-grad", alias_of="after_pre_grad_graph"),
    Stage("aot_joint_graph", "aot", "joint", "AOT joint graph", "joint", names="aot"),
    # Inductor logs these around its joint-graph passes for an inference graph
    # (torch/_inductor/compile_fx.py), e.g. a recompile in eval mode, compiled autograd.
    Stage("before_joint_graph", "inductor", "before pass", "joint graph before passes"),
    Stage("after_joint_graph", "inductor", "after pass", "joint graph after passes"),
    Stage("aot_forward_graph", "aot", "forward", "forward", "fwd", runs=True, names="aot",
          saved=True),
    Stage("aot_backward_graph", "aot", "backward", "backward", "bwd", runs=True, names="aot",
          saved=True),
    # The forward and backward drawn as one graph, joined by saved tensors.
    Stage("partition", "aot", "partition", "partition (forward | backward)", pictured=True,
          saved=True, logged=False),
    Stage("aot_inference_graph", "aot", "inference", "inference", "infer", runs=True,
          names="aot", pictured=True),
    Stage("before_post_grad_graph", "inductor", "before pass", names="aot"),
    Stage("inductor_post_grad_graph", "inductor", "post-grad", "post-grad", "post_grad",
          runs=True, names="aot", pictured=True),
    Stage("compiled_autograd_graph", "compiled_autograd", "captured", "compiled autograd", "ca",
          runs=True),
)  # fmt: skip
STAGE = {s.kind: s for s in STAGES}
# The graph kinds torch logs, as its trace events name them (newest torch first where renamed).
GRAPH_KINDS = tuple(s.kind for s in STAGES if s.logged)
KIND_ALIASES = {s.kind: s.alias_of for s in STAGES if s.alias_of}
# The stages the view shows, and those one-line summaries count, with their short names.
SHOWN_STAGES = tuple(s for s in STAGES if s.label)
SUMMARY_STAGES = tuple(s for s in STAGES if s.short)
STAGE_LABELS = {s.kind: s.label for s in SHOWN_STAGES}
PARTITION = next(s.kind for s in STAGES if not s.logged)


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
