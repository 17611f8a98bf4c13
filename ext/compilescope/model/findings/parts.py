"""One finding as plain data: what, where, how often, what it costs, and the fix to try."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..place import Place

# The kinds of finding, in the order the issue lists them.
KINDS = (
    "graph_break",  # a cause of graph breaks (one finding per cause)
    "eager_frame",  # a whole frame that runs without compiling
    "data_dependent",  # .item(), nonzero: a value or shape read from the data breaks the graph
    "recompile",  # recompiles grouped by the guard that failed
    "recompile_limit",  # a frame hit Dynamo's recompile limit: later calls run eagerly
    "fallback_op",  # an op Inductor did not generate code for (ATen / library call)
    "hot_kernel",  # a kernel that takes a large share of the step, with its roofline verdict
    "activation_memory",  # what an activation memory budget would save and cost
    "compile_time",  # the stage that dominates compile time
    "eager_optimizer",  # an optimizer step that runs eagerly, by its share of the real step
    "compiled_fused_optimizer",  # a compiled step of a fused optimizer: it runs eagerly anyway
    "launch_bound",  # a GPU step idle between kernels: launch- and host-bound
    "host_bound",  # a GPU step idle far longer than its launches take: the host does other work
    "fp32_matmul",  # fp32 matmuls without TF32 on a GPU that has it
    "host_sync",  # the CPU waits for the GPU inside the step (.item(), .cpu(), printing)
    "cuda_malloc",  # device memory freed to the driver and allocated again every step
    "channels_last",  # convolutions on NCHW tensors where channels-last is faster
    "cudnn_benchmark",  # convolutions on a GPU with cuDNN's auto-tuner off
    "padding",  # a batch mostly padding, computed on
    "recurrent_loop",  # a recurrent cell in a Python loop over time steps, unrolled
    "cudnn_disabled",  # convolutions on a GPU with cuDNN turned off
    "activation_checkpointing",  # checkpointed regions: the backward repeats their forward
    "debug_mode",  # a debugging setting left on (anomaly detection, CUDA_LAUNCH_BLOCKING)
    "host_tensors",  # tensors made on the CPU every step and copied to the GPU
    "unused_gradients",  # a backward computing gradients no optimizer updates
)

# Setting operations (see Setting).
OPS = ("set", "add", "compile_kwarg", "mark_dynamic")

# Paths that are not the user's own code: installed packages, the standard library, frozen
# modules, and compilescope's own capture code (it makes the call for `capture()`).
_LIBRARY = re.compile(
    r"/(site|dist)-packages/|/lib/python3\.\d+/|^<frozen |/torch/_dynamo/"
    r"|/compilescope/(live|trace|model|views)/|/compilescope/(cell|magic)\.py$"
)


def is_library(path: str) -> bool:
    """A file of installed or standard-library code (not what the user wrote)."""
    return bool(_LIBRARY.search(path.replace("\\", "/")))


@dataclass(frozen=True)
class Setting:
    """One setting to change, as data (nothing here is ever evaluated).

    op "set": `target` is a dotted torch config (`torch._dynamo.config.capture_scalar_outputs`)
    and `value` the JSON value to give it. op "add": `target` is a set-valued torch config
    (`torch._dynamo.config.ignore_logging_functions`) and `value` names the live object to add,
    to be resolved when the fix is applied: {"ref": "module.path:attr.chain"} (e.g.
    "transformers.modeling_utils:logger.warning_once", "builtins:print") or {"logger": NAME,
    "method": METHOD} (a method of the logger `logging.getLogger(NAME)`). op "compile_kwarg":
    torch.compile's keyword argument `target` (e.g. "dynamic") gets `value`. op "mark_dynamic":
    torch._dynamo.mark_dynamic(input, value) for the compiled frame's argument named `target`
    as torch's guard names it ("x", or a source like "L['x']").
    """

    target: str
    op: str
    value: bool | int | float | str | dict[str, Any] | None = None

    def python(self) -> str:
        """The setting as a line of Python a person could type."""
        value = self.value
        if self.op == "set":
            return f"{self.target} = {value!r}"
        if self.op == "add":
            return f"{self.target}.add({ref_text(value)})"
        if self.op == "compile_kwarg":
            return f"torch.compile(..., {self.target}={value!r})"
        if self.op == "mark_dynamic":
            return f"torch._dynamo.mark_dynamic({self.target}, {value!r})"
        return f"{self.target} {self.op} {value!r}"


def ref_text(value: object) -> str:
    """How a reference to a live object reads in Python (`transformers.modeling_utils.logger.
    warning_once`, `logging.getLogger('app').info`)."""
    if isinstance(value, dict) and "ref" in value:
        module, _, chain = str(value["ref"]).partition(":")
        return "print" if value["ref"] == "builtins:print" else f"{module}.{chain}"
    if isinstance(value, dict) and "logger" in value:
        return f"logging.getLogger({value['logger']!r}).{value.get('method', '')}"
    return repr(value)


@dataclass(frozen=True)
class Fix:
    """A fix: settings to apply together (kind "setting"), or a change to make at a line of
    code (kind "code"). `tradeoff` says what it may cost; `source` where the advice is from."""

    kind: str  # "setting" or "code"
    title: str
    settings: tuple[Setting, ...] = ()
    change: str = ""  # kind "code": the change to make, in words
    where: Place | None = None  # kind "code": the line to change
    tradeoff: str = ""
    source: str = ""  # e.g. "torch's hint for GB0291", "compilescope"

    def python(self) -> str:
        """The settings as lines of Python ("" for a code change)."""
        return "\n".join(s.python() for s in self.settings)


@dataclass(frozen=True)
class TorchText:
    """What torch itself says about a graph break: its registry id, type, explanation, hints."""

    gb_id: str = ""  # "GB0291"
    gb_type: str = ""
    explanation: str = ""
    hints: tuple[str, ...] = ()
    context: str = ""  # torch's "Developer debug context"
    message: str = ""  # torch's full message, once

    @property
    def url(self) -> str:
        if not self.gb_id:
            return ""
        return (
            f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{self.gb_id.lower()}.html"
        )


@dataclass(frozen=True)
class Counts:
    """How often: graph breaks (as Dynamo counts them), Dynamo restarts, recompiles, frames it
    touches, frames it leaves uncompiled (eager), frames whose rest after it runs eagerly."""

    breaks: int = 0
    restarts: int = 0
    recompiles: int = 0
    frames: int = 0
    eager_frames: int = 0
    partly_eager_frames: int = 0


@dataclass(frozen=True)
class Cost:
    """What it costs, where measured (None: not measured or not known)."""

    graphs: int = 0  # graphs it adds (each break ends one graph and starts another)
    compile_s: float | None = None  # compile time it makes (restarts, recompiles, a stage)
    step_s: float | None = None  # time per step (kernel, op)
    share: float | None = None  # share of the step's time
    bytes: int | None = None  # memory (activations) at stake
    saved_bytes: int | None = None  # memory a fix would save
    # Device idle time per step in the host's waits it makes (an `if` on a tensor at a graph
    # break): in `step_s` already, and removed with it where the rest may not be.
    waited_s: float | None = None
    # Kernel launches per step its fix removes: on a launch-bound GPU step, its share of the
    # idle time by launches (root_cause.launches_to_their_cause), added to `step_s` there.
    launches: float | None = None
    note: str = ""  # what the numbers mean, in words


@dataclass(frozen=True)
class Finding:
    """One answer: what happened, where in the user's code, how often, its cost, the fixes."""

    kind: str
    what: str
    key: str  # stable identity of the cause (same cause in two captures: same key)
    user: Place | None = None  # the user's own line that leads there
    at: Place | None = None  # the library line where it happens, when not the user's
    compile_ids: tuple[str, ...] = ()
    counts: Counts = field(default_factory=Counts)
    cost: Cost = field(default_factory=Cost)
    fixes: tuple[Fix, ...] = ()  # best first
    torch: TorchText | None = None
    score: float = 0.0  # rank: higher costs more

    @property
    def fix(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None

    def __str__(self) -> str:
        """A few lines: the kind and what, where, and each fix (the dataclass repr stays)."""
        lines = [f"[{self.kind.replace('_', ' ')}] {self.what}"]
        if self.user is not None:
            lines.append(f"  where: {self.user.label()}")
        for fix in self.fixes:
            lines.append(f"  fix: {fix.python() or f'{fix.title}: {fix.change}'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (tuples as lists)."""
        return {k: _plain(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        def place(d: dict[str, Any] | None) -> Place | None:
            return Place(**d) if d else None

        fixes = tuple(
            Fix(
                **{
                    **f,
                    "settings": tuple(Setting(**s) for s in f.get("settings", ())),
                    "where": place(f.get("where")),
                }
            )
            for f in data.get("fixes", ())
        )
        torch = data.get("torch")
        return cls(
            **{
                **data,
                "user": place(data.get("user")),
                "at": place(data.get("at")),
                "compile_ids": tuple(data.get("compile_ids", ())),
                "counts": Counts(**data.get("counts", {})),
                "cost": Cost(**data.get("cost", {})),
                "fixes": fixes,
                "torch": TorchText(**{**torch, "hints": tuple(torch.get("hints", ()))})
                if torch
                else None,
            }
        )


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
