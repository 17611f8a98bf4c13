"""Fixes tried for real: a finding's settings held around a second capture of the same code."""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace

from ...model.capture import Capture
from ...model.findings.fix_trial import FixTrial
from ...model.findings.parts import Finding, Fix, Setting
from .. import torch_bridge
from ..options import CompileOptions
from ..pipeline import Replay, replay_of

_IDENTIFIER_CHAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."


def resolve_ref(value: object) -> object:
    """The live object a fix names: {"ref": "module.path:attr.chain"} is imported and followed
    by attribute (names only, nothing evaluated); {"logger": NAME, "method": M} is a method of
    `logging.getLogger(NAME)`. A ValueError names what could not be found."""
    if isinstance(value, dict) and "logger" in value:
        logger = logging.getLogger(str(value["logger"]))
        method = str(value.get("method", ""))
        if not method.isidentifier() or not hasattr(logger, method):
            raise ValueError(f"logger {value['logger']!r} has no method {method!r}")
        return getattr(logger, method)
    if not (isinstance(value, dict) and isinstance(value.get("ref"), str)):
        raise ValueError(f"a fix names an object as {{'ref': 'module:attr'}}, not {value!r}")
    module_name, _, chain = value["ref"].partition(":")
    if not chain or any(c not in _IDENTIFIER_CHAIN for c in module_name + chain):
        raise ValueError(f"not a reference to a module attribute: {value['ref']!r}")
    # Only a module the user's code has already imported: a capture may come from a log, and
    # importing a module it names would run that module's code.
    target: object | None = sys.modules.get(module_name)
    if target is None:
        raise ValueError(f"{module_name!r} is not imported in this process: import it first")
    for part in chain.split("."):
        if not part.isidentifier() or part.startswith("__") or not hasattr(target, part):
            raise ValueError(f"{module_name}.{chain} cannot be followed at {part!r}")
        target = getattr(target, part)
    return target


# Settings outside torch's config modules that a fix may hold: TF32 for matmuls (what
# torch.set_float32_matmul_precision("high") sets) and for convolutions, cuDNN's auto-tuner.
_BACKEND_SETTINGS = {
    "torch.backends.cuda.matmul.allow_tf32": ("torch.backends.cuda", "matmul"),
    "torch.backends.cudnn.allow_tf32": ("torch.backends.cudnn", ""),
    "torch.backends.cudnn.benchmark": ("torch.backends.cudnn", ""),
    "torch.backends.cudnn.enabled": ("torch.backends.cudnn", ""),
    "torch.backends.cudnn.deterministic": ("torch.backends.cudnn", ""),
}


def _config(target: str) -> tuple[object, str]:
    """The config module and attribute a dotted torch setting names."""
    module_name, _, attribute = target.rpartition(".")
    if target in _BACKEND_SETTINGS:
        name, holder = _BACKEND_SETTINGS[target]
        module = importlib.import_module(name)
        return (getattr(module, holder) if holder else module), attribute
    if not (module_name.startswith("torch.") and module_name.endswith(".config")):
        raise ValueError(f"a fix may change torch's config modules only, not {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ValueError(f"this torch has no {module_name}") from None
    if not hasattr(module, attribute):
        raise ValueError(f"this torch has no setting {target}")
    return module, attribute


@contextlib.contextmanager
def applying(fix: Fix) -> Iterator[None]:
    """Hold a fix's config settings inside the block and restore every one afterwards (on
    errors too). Settings that belong to one compile (torch.compile's `dynamic=`, mark_dynamic)
    cannot be held globally: `holding` applies them around a run of the code (`try_fix`,
    `%%compile_fx --fix`), or the fix says where to write them."""
    if fix.kind != "setting":
        raise ValueError(f"this fix is a change to the code, not a setting: {fix.change}")
    undo: list[Callable[[], object]] = []
    try:
        for setting in fix.settings:
            if setting.op in ("compile_kwarg", "mark_dynamic"):
                continue
            module, attribute = _config(setting.target)
            if setting.op == "set":
                undo.append(
                    functools.partial(setattr, module, attribute, getattr(module, attribute))
                )
                setattr(module, attribute, setting.value)
            elif setting.op == "add":
                collection = getattr(module, attribute)
                item = resolve_ref(setting.value)
                if item not in collection:
                    collection.add(item)
                    undo.append(functools.partial(collection.discard, item))
            else:
                raise ValueError(f"unknown setting operation {setting.op!r} for {setting.target}")
        yield
    finally:
        for action in reversed(undo):
            action()


def try_fix(
    capture: Capture, finding: Finding, fix: Fix | None = None, *, baseline: bool = True
) -> FixTrial:
    """Capture the same code again with `fix` (the finding's first fix by default) applied,
    then restore every setting; returns the captures side by side.

    Works for captures made by `capture()` and `%%compile_fx` (they know how to run the code
    again; a notebook cell runs again). Dynamo's caches are reset before each run, so that
    every capture compiles from scratch: other compiled functions compile again on their next
    call. With `baseline` (the default), the code is first captured again without the fix, so
    that compile times compare like with like (the first compile of a process also pays
    torch's one-time start-up, seconds on a CPU); `before` is then that second capture.
    """
    fix = fix or finding.fix
    if fix is None:
        raise ValueError(f"this finding has no fix to try: {finding.what}")
    check_setting(fix)
    replay = replay_of(capture)
    if replay is None:
        raise ValueError(
            "this capture cannot run its code again (it was read from a log or saved JSON, or "
            "made by capturing()): run your code again inside "
            "`with compilescope.applying(fix), compilescope.capturing() as cap:`"
        )
    fixed_options(replay.how, fix)  # a torch.compile argument it cannot set: before any run
    before = capture
    if baseline:
        torch_bridge.reset_dynamo()
        before = replay.run()
    try:
        with holding(fix, replay) as how:
            after = replay.run(how)
    except Exception as error:  # the trial's failure is its result, shown beside the before
        error_text = f"{type(error).__name__}: {error}"
        return FixTrial(finding, fix, before, None, error_text, rerun_baseline=baseline)
    return FixTrial(finding, fix, before, after, rerun_baseline=baseline)


def check_setting(fix: Fix) -> None:
    """A ValueError for a fix that is a change to the user's code: only settings are applied."""
    if fix.kind != "setting":
        where = f" at {fix.where.label()}" if fix.where else ""
        raise ValueError(f"this fix is a change to your code{where}: {fix.change}")


@contextlib.contextmanager
def holding(fix: Fix, replay: Replay) -> Iterator[CompileOptions]:
    """The one way a fix is applied (`try_fix`, `%%compile_fx --fix`): everything it changes,
    held around one run of `replay`'s code. Its config settings (`applying`), its dynamic marks
    on the code's arguments, and its torch.compile arguments: the block gets `replay.how` with
    them, to run with. Dynamo's caches are reset first (a frame compiled before would not see
    the new settings) and after (nothing compiled under the fix outlives the block). A
    ValueError on entering, before the block runs, for a fix that cannot be applied here."""
    check_setting(fix)
    how = fixed_options(replay.how, fix)
    marks = [s for s in fix.settings if s.op == "mark_dynamic"]
    torch_bridge.reset_dynamo()
    with contextlib.ExitStack() as held:
        held.callback(torch_bridge.reset_dynamo)  # last out: after the settings are restored
        held.enter_context(applying(fix))
        held.enter_context(marked_dynamic(replay, marks))
        yield how


def fixed_options(how: CompileOptions, fix: Fix) -> CompileOptions:
    """`how` with every torch.compile argument the fix sets ("compile_kwarg" settings)."""
    for setting in fix.settings:
        if setting.op == "compile_kwarg":
            how = with_compile_kwarg(how, setting)
    return how


def with_compile_kwarg(how: CompileOptions, setting: Setting) -> CompileOptions:
    """`how` with the torch.compile option a "compile_kwarg" setting names set to its value;
    a ValueError for an option not settable here, or a value of the wrong type."""
    target, value = setting.target, setting.value
    if target not in ("dynamic", "fullgraph", "mode", "backend"):
        raise ValueError(f"torch.compile has no option {target!r} to set here")
    if target == "dynamic" and (value is None or isinstance(value, bool)):
        return replace(how, dynamic=value)
    if target == "fullgraph" and isinstance(value, bool):
        return replace(how, fullgraph=value)
    if target == "mode" and (value is None or isinstance(value, str)):
        return replace(how, mode=value)
    if target == "backend" and isinstance(value, str):
        return replace(how, backend=value)
    raise ValueError(f"torch.compile's {target}= cannot be {value!r} ({type(value).__name__})")


@contextlib.contextmanager
def marked_dynamic(replay: Replay, marks: list[Setting]) -> Iterator[None]:
    """torch._dynamo.mark_dynamic on the inputs the settings name (by argument name, or by
    torch's source `L['x']`); the marks are taken off again afterwards."""
    if not marks:
        yield
        return
    import torch

    named = replay.arguments
    marked = []
    for setting in marks:
        name = setting.target.removeprefix("L['").removesuffix("']")
        value = named.get(name)
        if not isinstance(value, torch.Tensor) or not isinstance(setting.value, int):
            raise ValueError(
                f"cannot mark {setting.target!r} dynamic: no tensor argument of that name"
            )
        before = set(getattr(value, "_dynamo_dynamic_indices", set()))
        torch._dynamo.mark_dynamic(value, setting.value)
        marked.append((value, before))
    try:
        yield
    finally:
        for value, before in marked:
            # torch._dynamo.mark_dynamic sets this attribute on the tensor at runtime
            # (torch/_dynamo/decorators.py); torch's stubs do not declare it.
            setattr(value, "_dynamo_dynamic_indices", before)  # noqa: B010
