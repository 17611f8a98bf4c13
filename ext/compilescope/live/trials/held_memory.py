"""What each compiled forward really saves for backward: saved-tensor hooks over its first run.

AOTAutograd runs a compiled forward inside `CompiledFunction.apply`; autograd hands each tensor
that `ctx.save_for_backward` kept to the saved-tensor pack hook before `apply` returns. So while
a capture runs the user's code, a pack hook that finds the compiled function on the stack sees,
for every compiled forward, the tensors it really holds for the backward, Inductor's own copies
included (on a CPU it saves layout-converted copies of conv inputs and weights, made after the
partition). The compiled function is recognised by what it is (an autograd.Function class with
a `compiled_fw`), found among the locals of the few frames above the hook, not by the name or
shape of one of torch's frames: up to torch 2.13 that is `apply`'s own frame, from 2.14 (where
torch/autograd/function.py sets `apply = _C._FunctionBase.__dict__["apply"]`, a C function
with no frame) the frame that called it, AOTAutograd's runtime wrapper. The compile id comes from Dynamo's bytecode hook: the transformed code
of each compile, found on the stack. Only the first run of each compiled forward is read, and the hooks come off at the
first optimizer step after which nothing compiled (so later steps, timed or not, run without).
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ...common import OWN_HOOK_REASON
from ...model.capture import Capture
from ...model.graph import TensorMeta
from ...model.measured.held_memory import HeldMemory, HeldTensor
from .. import torch_bridge, torch_support
from ..timing.step_boundaries import hearing_steps

# The saved-tensor hooks' stack (what torch.autograd.graph.saved_tensors_hooks pushes and
# pops): pushed and popped here by hand, so the hooks can come off in the middle of a block.
_AUTOGRAD: Any = torch._C._autograd
_STACK_LIMIT = 200
# How far above the hook the compiled function's call may be: past torch.compiler.disable's
# wrapper (1-2 frames) to apply (2.8-2.13) or to its caller (2.14: RuntimeWrapper's code).
_CALL_DEPTH = 6


@dataclass
class _Run:
    """The first run of one compiled forward: its saved tensors, as (meta, storage, bytes)."""

    compile_id: str | None
    inputs: set[tuple[str, int]]
    saves: list[tuple[str, tuple[str, int] | None, int]] = field(default_factory=list)


class HeldRecorder:
    """Hears, inside `measuring()`, the tensors each compiled forward saves on its first run."""

    def __init__(self) -> None:
        self.codes: dict[types.CodeType, str] = {}  # Dynamo's transformed code -> compile id
        self.runs: dict[type, _Run] = {}  # AOTAutograd's CompiledFunction -> its first run
        self.note = ""  # why nothing (or not everything) was measured
        self._pushed = False
        self._compiles_at_step = 0
        self.off_early = False  # the hooks came off at a step, before the block ended
        # The call being heard: its frame (held only until the next call or the hooks come
        # off, so an id can't be reused for another frame) and its run (None: not read).
        self._call: tuple[types.FrameType, _Run | None] | None = None
        # Never traced: a hook can run while Dynamo's frame callback is on (FSDP2's eager hooks
        # inside a compiled module), and a frame Dynamo tried would be a compile of its own.
        self._hooks = (
            torch_bridge.never_traced(OWN_HOOK_REASON)(self._pack),
            torch_bridge.never_traced(OWN_HOOK_REASON)(_unpack),
        )

    @contextlib.contextmanager
    def measuring(self, compiled_autograd: bool = False) -> Iterator[None]:
        """Around the user's code: the hooks on, then off (also if the code raises)."""
        why_not = _why_not_hook(compiled_autograd)
        if why_not:
            self.note = why_not
            yield
            return
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch_bridge.bytecode_listener(self._hear_code))
            try:
                _AUTOGRAD._push_saved_tensors_default_hooks(*self._hooks)
            except AttributeError as error:  # guard against torch API drift
                self.note = f"torch {torch.__version__} has no saved-tensor hooks API we know"
                torch_support.missing("memory held for backward", error)
                yield
                return
            self._pushed = True
            stack.callback(self._pop)
            # A compiled optimizer step calls it too, and compiles as without it.
            stack.enter_context(hearing_steps(self._step_ended))
            yield

    def _pop(self) -> None:
        """Take the hooks off if they are still on, and only if they are on top (a block of the
        user's own hooks inside is never popped)."""
        if not self._pushed:
            return
        if _AUTOGRAD._top_saved_tensors_default_hooks(False) != self._hooks:
            self.note = self.note or "the code left saved-tensor hooks of its own on"
            return
        _AUTOGRAD._pop_saved_tensors_default_hooks()
        self._pushed = False
        self._call = None

    def _step_ended(self, *_: object) -> None:
        """An optimizer step: once a step passes with nothing new compiled, every compiled
        forward has had its first run; later steps run without the hooks."""
        if len(self.codes) == self._compiles_at_step and self._pushed:
            self._pop()
            self.off_early = not self._pushed
        self._compiles_at_step = len(self.codes)

    def _hear_code(self, code: types.CodeType, new_code: types.CodeType) -> None:
        compile_id = torch_bridge.current_compile_id()
        if compile_id is not None:
            self.codes[new_code] = compile_id

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        try:
            run = self._run_of_call(sys._getframe(1))
            if run is not None:
                key, size = _storage(tensor)
                run.saves.append((_meta(tensor), key, size))
        except Exception as error:  # measuring must never break the user's step
            self.note = f"measuring stopped: {type(error).__name__}: {error}"
        # Detached, as torch's own example does: a saved output packed as itself would hold
        # its grad_fn, which holds it (a cycle that outlives the step without backward).
        return tensor.detach()

    def _run_of_call(self, frame: types.FrameType | None) -> _Run | None:
        """The first run of the compiled forward whose call saves this tensor, or None (another
        autograd op, or a later run of a forward already read)."""
        for _ in range(_CALL_DEPTH):
            if frame is None or frame.f_code in self.codes:
                return None  # reached the user's compiled code: no compiled function between
            if self._call is not None and self._call[0] is frame:
                return self._call[1]  # a later tensor of the call being heard
            found = _compiled_function(frame)
            if found is not None:
                cls, inputs = found
                run = None
                if cls not in self.runs:  # its first call: read it
                    run = self.runs[cls] = _Run(self._compile_of(frame), inputs)
                self._call = (frame, run)
                return run
            frame = frame.f_back
        return None

    def _compile_of(self, frame: types.FrameType) -> str | None:
        """The compile whose transformed code is running further up the stack."""
        up: types.FrameType | None = frame
        for _ in range(_STACK_LIMIT):
            if up is None:
                return None
            if up.f_code in self.codes:
                return self.codes[up.f_code]
            up = up.f_back
        return None


def _compiled_function(frame: types.FrameType) -> tuple[type, set[tuple[str, int]]] | None:
    """AOTAutograd's CompiledFunction if this frame runs or calls it (a class among its locals,
    or a bound `apply` of one, that has a `compiled_fw`), with the storages of the call's
    tensor arguments (the frame's tuples and lists of tensors)."""
    local = frame.f_locals
    for value in local.values():
        cls = value if isinstance(value, type) else getattr(value, "__self__", None)
        if isinstance(cls, type) and hasattr(cls, "compiled_fw"):
            inputs = {
                key
                for v in local.values()
                if isinstance(v, (tuple, list))
                for a in v
                if (key := _storage(a)[0])
            }
            return cls, inputs
    return None


def _unpack(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def _why_not_hook(compiled_autograd: bool = False) -> str:
    """Why the hooks must stay off: the user's own hooks are on (ours would hide theirs), or
    compiled autograd runs the backward (it traces saved-tensor hooks into its graph: the
    capture would change what compiles)."""
    try:
        import torch._dynamo.config as dynamo_config

        if compiled_autograd or getattr(dynamo_config, "compiled_autograd", False):
            return "not measured under compiled autograd: it would trace the hooks into its graph"
        if not _AUTOGRAD._saved_tensors_hooks_is_enabled():
            return "saved-tensor hooks are disabled here"
        if _AUTOGRAD._top_saved_tensors_default_hooks(False) is not None:
            return "the code runs under saved-tensor hooks of its own, which these would hide"
    except AttributeError as error:  # guard against torch API drift
        torch_support.missing("memory held for backward", error)
        return f"torch {torch.__version__} has no saved-tensor hooks API compilescope knows"
    return ""


def _storage(tensor: object) -> tuple[tuple[str, int] | None, int]:
    """(device, address) of a tensor's storage, and its size; (None, bytes) without one."""
    if not isinstance(tensor, torch.Tensor):
        return None, 0
    try:
        storage = tensor.untyped_storage()
        return (str(tensor.device), storage.data_ptr()), storage.nbytes()
    except (RuntimeError, NotImplementedError):  # mkldnn, sparse: no plain storage
        return None, tensor.numel() * tensor.element_size()


def _meta(tensor: torch.Tensor) -> str:
    """torch's annotation of a tensor: `f32[4, 8][8, 1]cpu`."""
    from torch.fx.graph import dtype_abbrs

    dtype = dtype_abbrs.get(tensor.dtype, str(tensor.dtype))
    stride = tensor.stride() if tensor.layout == torch.strided else ()
    dims = ", ".join(str(d) for d in tensor.shape)
    return f"{dtype}[{dims}][{', '.join(str(s) for s in stride)}]{tensor.device}"


def with_held_memory(capture: Capture, recorder: HeldRecorder) -> Capture:
    """Each compile with a partition gets what its compiled forward held (`Compile.held`)."""
    by_compile: dict[str, list[_Run]] = {}
    for run in recorder.runs.values():
        if run.compile_id is not None:
            by_compile.setdefault(run.compile_id, []).append(run)
    # The capture keeps the figures; the recorder lets go of torch's compiled functions.
    recorder.runs, recorder.codes = {}, {}
    compiles = []
    for c in capture.compiles:
        if c.graph("aot_backward_graph") is None:
            compiles.append(c)
            continue
        runs = by_compile.get(str(replace(c.id, rank=None)), [])
        forwards = len(c.graphs.get("aot_forward_graph", ()))
        note = recorder.note or (
            "its compiled forward first ran after measuring ended (at the first optimizer step "
            "after which nothing new had compiled)"
            if recorder.off_early
            else "its compiled forward did not run while capturing"
        )
        compiles.append(replace(c, held=_held(runs, forwards, note, recorder.note)))
    return replace(capture, compiles=tuple(compiles))


def _held(runs: list[_Run], forwards: int, not_run: str, trouble: str) -> HeldMemory:
    if not runs:
        return HeldMemory(note=not_run)
    numbers: dict[tuple[str, int] | None, int] = {}
    tensors = []
    for run in runs:
        for meta, key, size in run.saves:
            if key is None:  # no storage to share: a storage of its own
                number = len(numbers) + 1
                numbers[("", -number)] = number
            else:
                number = numbers.setdefault(key, len(numbers) + 1)
            kind = "input" if key is not None and key in run.inputs else "activation"
            tensors.append(HeldTensor(_parse(meta), number, size, kind))
    note = trouble  # measured: a note says only what limits the comparison
    if len(runs) > 1 or forwards > 1:
        note = (
            f"{len(runs)} compiled forwards ran under this compile id (DDPOptimizer's split): "
            "measured together, the partition shows the first"
        )
    return HeldMemory(tuple(tensors), note)


def _parse(meta: str) -> TensorMeta | None:
    found = TensorMeta.parse_all(meta)
    return found[0] if found else None
