"""Graph breaks grouped by cause: one finding per cause, however many breaks and restarts it makes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..breaks import Fallback, GraphBreak
from ..capture import Capture
from ..compile import Compile
from ..place import Place
from .catalog import remedy
from .parts import Cost, Counts, Finding, Fix, TorchText
from .places import FrameKey, frame_key, frame_of, split_places
from .torch_hints import Registry, hint_fixes, torch_texts
from .torch_optimizer import compiled_fused_step, deliberate_break, fused_update

_DATA_DEPENDENT = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")
_OP = re.compile(r"aten\.(\w+)")


@dataclass
class _Cause:
    """The breaks of one cause, gathered over the capture."""

    key: str
    texts: tuple[TorchText, ...]
    user: Place | None
    at: Place | None
    breaks: list[tuple[Compile, GraphBreak]] = field(default_factory=list)  # Dynamo counts these
    fallbacks: list[tuple[Compile, Fallback]] = field(default_factory=list)
    eager: set[FrameKey] = field(default_factory=set)  # frame keys that fell back to eager
    rest_eager: set[FrameKey] = field(default_factory=set)  # the rest after the break is eager

    @property
    def records(self) -> list[tuple[Compile, GraphBreak | Fallback]]:
        return [*self.breaks, *self.fallbacks]


def break_findings(capture: Capture, registry: Registry | None = None) -> list[Finding]:
    """One finding per cause of graph breaks (torch's gb type at one line of code): the breaks
    Dynamo counts, and the fallbacks to eager the same cause makes (GPT-2's logging call breaks
    two frames and leaves the rest of a third to eager: one finding, two breaks)."""
    causes: dict[str, _Cause] = {}
    for c in capture:
        for brk in c.breaks_and_fallbacks:
            if brk.at_own_hook:
                continue
            texts = torch_texts(brk.text or brk.reason, registry)
            first = texts[0]
            loc = brk.location
            if deliberate_break(texts, loc):
                continue  # torch's own, in every compiled optimizer step (torch_optimizer.py)
            where = f"{loc.file}:{loc.line}" if loc else ""
            key = f"{first.gb_id or first.gb_type or brk.reason[:80]}@{where}"
            cause = causes.get(key)
            if cause is None:
                user, at = split_places(loc, brk.user_stack, capture)
                if user is None and brk.location is None:
                    user, at = split_places(None, frame_of(capture, c).stack, capture)
                cause = causes[key] = _Cause(key, texts, user, at)
            if isinstance(brk, Fallback):
                cause.fallbacks.append((c, brk))
                (cause.eager if brk.scope == "frame" else cause.rest_eager).add(frame_key(c))
            else:
                cause.breaks.append((c, brk))
                if c.failure:
                    cause.eager.add(frame_key(c))
    return [_finding(capture, cause) for cause in causes.values()]


def _finding(capture: Capture, cause: _Cause) -> Finding:
    records = cause.records
    broken = {(frame_key(c), c.id.frame_compile_id, c.id.attempt) for c, _ in records}
    resumes = _resume_names(capture, cause)
    involved = [c for c in capture if _involved(c, broken, resumes)]
    heads = {(k, fc) for k, fc, _ in broken}
    restarts = [
        c for c in involved if c.id.attempt and (frame_key(c), c.id.frame_compile_id) in heads
    ]
    wasted = sum(float(c.metrics.get("dynamo_time_before_restart_s") or 0.0) for c in restarts)
    step_s, share = _split_cost(capture, involved, heads)
    fixes = hint_fixes(cause.texts, cause.user, cause.at)
    kind = "graph_break"
    if any(s.target.endswith(_DATA_DEPENDENT) for f in fixes for s in f.settings):
        kind = "data_dependent"
    frames = {frame_key(c) for c, _ in records}
    eager_names = _names(capture, records, cause.eager)
    if eager_names:
        kind = "eager_frame"
    rest_names = _names(capture, records, cause.rest_eager - cause.eager)
    breaks = len(cause.breaks)
    notes = [
        "each break ends one graph and starts another; compile time: Dynamo's tracing thrown "
        "away at each restart"
    ]
    if step_s is not None:
        notes.append(
            "per step: the time in your real steps between the graphs each break splits (the "
            "eager code at the break, guards, the next graph's call), forward and backward: "
            "at most what removing the break saves, as the code at the break still runs, and "
            "often far more (logging breaks, benchmarks/RESULTS.md: a GPT-2's on an H100 saved "
            "0.13 ms of 0.61 ms; a ResNet-18's on an H200 nothing measurable of 1.1-2.1 ms)"
        )
    if eager_names:
        notes.append("a frame that falls back to eager runs uncompiled every call")
    if rest_names:
        notes.append("the rest of a frame after a break Dynamo cannot resume from runs uncompiled")
    found = Finding(
        kind=kind,
        what=_what(cause, fixes, eager_names, rest_names),
        key=f"{kind}:{cause.key}",
        user=cause.user,
        at=cause.at,
        compile_ids=tuple(str(c.id) for c in involved),
        counts=Counts(
            breaks=breaks,
            restarts=len(restarts),
            frames=len(frames),
            eager_frames=len(cause.eager),
            partly_eager_frames=len(cause.rest_eager - cause.eager),
        ),
        cost=Cost(
            # A fallback ends a graph without starting another; a failed frame keeps none.
            graphs=sum(1 for c, _ in cause.breaks if not c.failure),
            compile_s=wasted or None,
            step_s=step_s,
            share=share,
            note="; ".join(notes),
        ),
        fixes=fixes,
        torch=cause.texts[0],
    )
    if _inside_ddp(cause):
        return _ddp_break(found)
    update = fused_update(cause.texts, cause.at)
    return compiled_fused_step(found, update, capture) if update else found


# DistributedDataParallel's own Python: its forward breaks the graph twice in torch 2.11-2.14
# (a contextlib generator, `self.logger.set_runtime_stats_and_log()`), whatever the user wrote.
_DDP_FILE = "torch/nn/parallel/distributed.py"


def _inside_ddp(cause: _Cause) -> bool:
    """A break in DDP's code, or in what DDP's forward calls (contextlib), not in the user's."""
    for _, brk in cause.records:
        files = [brk.location.file if brk.location else ""]
        files += [p.file for p in brk.user_stack]
        if any(f.replace("\\", "/").endswith(_DDP_FILE) for f in files if f):
            at = brk.location.file if brk.location else ""
            return not at or "site-packages" in at or "/lib/python" in at or _DDP_FILE in at
    return False


def _ddp_break(found: Finding) -> Finding:
    """DDP's break, attributed to the user's call of the DDP model, with DDP's own remedy
    (ranked by its measured cost alone: `ddp_internal_break` weighs little without one)."""
    where = f" at `{found.at.code.strip()}`" if found.at and found.at.code else ""
    return replace(
        found,
        kind="ddp_internal_break",
        key=found.key.replace(found.kind, "ddp_internal_break", 1),
        what=f"DistributedDataParallel's own code breaks the graph{where} "
        f"({_DDP_FILE} and what it calls), inside your call of the DDP model: not a line of "
        "yours; it matters only as far as its measured cost says.",
        fixes=(remedy("ddp_compile_inside").fix(found.user),),
    )


def _split_cost(
    capture: Capture,
    involved: list[Compile],
    heads: set[tuple[FrameKey, int | None]],
) -> tuple[float | None, float | None]:
    """What the breaks cost per step in the real steps: the gaps from the graph of a frame that
    broke to the next graph (forward: its resume function's, or the next frame's where the rest
    of it ran eagerly), and back (backward). None where no such gap was measured."""
    real = capture.timings.real_steps if capture.timings is not None else None
    if real is None or not real.gaps:
        return None, None
    broken = {str(c.id) for c in involved if (frame_key(c), c.id.frame_compile_id) in heads}
    seconds = [
        g.seconds
        for g in real.gaps
        if (g.before in broken and g.role != "backward")
        or (g.after in broken and g.role == "backward")
    ]
    if not seconds:
        return None, None
    wall = real.compiled.median_s
    # The gaps come from the split's steps, the wall from the clean ones before: on a noisy
    # machine the gaps can add up to more than a clean step. A break never costs more than it.
    step_s = min(sum(seconds), wall) if wall > 0 else sum(seconds)
    return step_s, (step_s / wall if wall > 0 else None)


def _names(
    capture: Capture, records: list[tuple[Compile, GraphBreak | Fallback]], keys: set[FrameKey]
) -> list[str]:
    """The function names of the frames among `keys`, sorted."""
    return sorted(
        {frame_of(capture, c).function or "?" for c, _ in records if frame_key(c) in keys}
    )


def _involved(
    c: Compile, broken: set[tuple[FrameKey, int | None, int]], resumes: set[tuple[str, str]]
) -> bool:
    """A compile the cause touches: one that broke, a later attempt of it (a restart), or the
    resume function Dynamo made after the break (`torch_dynamo_resume_in_<fn>_at_<line>`)."""
    key = frame_key(c)
    if any(key == k and c.id.frame_compile_id == fc and c.id.attempt >= a for k, fc, a in broken):
        return True
    return (c.frame.function, c.frame.file) in resumes


def _resume_names(capture: Capture, cause: _Cause) -> set[tuple[str, str]]:
    """The resume functions the cause's breaks make, with their files."""
    names: set[tuple[str, str]] = set()
    for c, brk in cause.records:
        frame = frame_of(capture, c)
        # The frame's own line that led to the break (a call, when it broke further in).
        lines = [
            s.line for s in brk.user_stack if (s.file, s.function) == (frame.file, frame.function)
        ]
        if not lines and brk.location is not None and brk.location.file == frame.file:
            lines = [brk.location.line]
        if lines:
            names.add((f"torch_dynamo_resume_in_{frame.function}_at_{lines[-1]}", frame.file))
    return names


def _what(cause: _Cause, fixes: tuple[Fix, ...], eager: list[str], rest: list[str]) -> str:
    """One plain sentence: the thing that breaks, and what it does to compilation."""
    first = cause.texts[0]
    adds = [s for f in fixes for s in f.settings if s.op == "add"]
    sets = {s.target.rsplit(".", 1)[-1] for f in fixes for s in f.settings if s.op == "set"}
    place = cause.at or cause.user
    code = place.code if place else ""
    if adds and isinstance(adds[0].value, dict):
        value = adds[0].value
        name = value.get("ref", "").partition(":")[2] or value.get("method", "")
        # The code names it as the user wrote it (`log.warning(`), when it does.
        written = re.search(rf"([A-Za-z_][\w.]*\.{re.escape(name.split('.')[-1])})\s*\(", code)
        name = written.group(1) if written else name
        if value.get("ref", "").startswith("builtins:"):
            subject = f"`{name}()`"
        elif "logging" in adds[0].target:
            subject = f"The logging call `{name}`"
        else:
            subject = f"`{name}`"
    elif "capture_scalar_outputs" in sets:
        subject = "`.item()` (a tensor read into a Python number)"
    elif "capture_dynamic_output_shape_ops" in sets:
        op = _OP.search(first.context or first.explanation)
        subject = f"`{op.group(1) if op else 'an op'}` (its output's size depends on the data)"
    elif code:
        subject = f"`{code[:60]}`"
    else:
        subject = "Code Dynamo cannot trace"
    if eager:
        why = cause.texts[-1].gb_type if len(cause.texts) > 1 else first.gb_type
        names = ", ".join(f"`{n}`" for n in eager)
        return f"{subject} makes {names} fall back to eager entirely ({why})."
    reason = f": {first.gb_type}" if first.gb_type and subject.startswith("`") else ""
    if not cause.breaks:  # only a frame's rest left to eager: Dynamo counts no break
        names = ", ".join(f"`{n}`" for n in rest)
        return f"{subject} cuts the graph of {names} short{reason}; the rest runs eagerly."
    after = f"; the rest of {', '.join(f'`{n}`' for n in rest)} runs eagerly" if rest else ""
    return f"{subject} breaks the graph{reason}{after}."
