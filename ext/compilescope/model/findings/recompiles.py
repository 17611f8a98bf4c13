"""Recompiles grouped by the guard that failed, recompile-limit hits, and frames left uncompiled."""

from __future__ import annotations

import re
from collections import defaultdict

from ..capture import Capture
from ..compile import OWN_HOOK_STATUS, Compile, compile_seconds
from ..place import Place
from .catalog import remedy
from .guards import (
    dtype_guard,
    flag_fix,
    guard_fixes,
    guard_of,
    guard_values,
    is_value_guard,
    plain_name,
    seen_values,
    shown_source,
    size_guard,
)
from .parts import Cost, Counts, Finding, Fix, Setting
from .places import (
    FrameKey,
    frame_key,
    frame_of,
    frame_places,
    optimizer_place,
)
from .torch_hints import Registry, hint_fixes, torch_texts
from .torch_optimizer import (
    first_step_eagerly,
    lr_in_a_tensor,
    lr_recompile,
    lr_recompile_what,
    state_recompile,
    state_recompile_what,
)

# Dynamo's words when a frame hits its recompile limit, and the limit's value.
_LIMIT = re.compile(r"recompile limit exceeded|hit config\.(\w*recompile_limit)", re.IGNORECASE)
_LIMIT_VALUE = re.compile(r"currently set to (\d+)|recompile_limit \((\d+)\)")


def recompile_findings(capture: Capture) -> list[Finding]:
    """One finding per frame and failed guard, counting the recompiles it made (a frame that
    hit the recompile limit has them in its limit finding instead: one cause, one finding)."""
    limited = {frame_key(c) for c in capture if _limit_hit(c)}
    groups: dict[tuple[FrameKey, str], list[tuple[Compile, str]]] = defaultdict(list)
    for c in capture:
        if c.recompile_reasons and not _limit_hit(c) and frame_key(c) not in limited:
            # A compile lists one reason per cache entry it missed; the first names it.
            groups[(frame_key(c), guard_of(c.recompile_reasons[0]))].append(
                (c, c.recompile_reasons[0])
            )
    found = []
    for (_, guard), items in groups.items():
        first = items[0][0]
        frame = frame_of(capture, first)
        user, at = frame_places(frame, capture)
        seen = seen_values(reason for _, reason in items)
        size = size_guard(guard)
        what = f"`{frame.function or '?'}` recompiles: `{_short(guard)}` failed"
        if size:
            what = (
                f"`{frame.function or '?'}` recompiles when dim {size['dim']} of "
                f"`{size['name']}` changes" + (f" ({', '.join(seen)})" if seen else "")
            )
        fixes = guard_fixes(guard, user)
        dtype = dtype_guard(guard)
        if dtype:
            what = f"`{frame.function or '?'}` recompiles for each dtype of `{dtype['name']}`" + (
                f" ({', '.join(seen)})" if seen else ""
            )
        if is_value_guard(guard):
            values = guard_values(reason for _, reason in items)
            if values and set(values) <= {"True", "False"}:
                fixes = (flag_fix(plain_name(shown_source(guard)), user), *fixes)
            sizes = _graph_sizes(capture, frame_key(first))
            # An int with a graph of another length for each of 3+ values sets a loop's count
            # (a branch on it gives two lengths at most): Dynamo unrolled the loop, and a tensor
            # would not help (`range()` of a tensor breaks the graph).
            loop = _counts(values) and len(sizes) >= 3 and len(set(sizes)) == len(sizes)
            if loop:
                name = plain_name(shown_source(guard))
                body = remedy("loop_count_in_python")
                fixes = (
                    body.fix(user, body.change.replace("{count}", name)),
                    *(f for f in fixes if "as a tensor" not in f.title),
                )
            what = (
                f"`{frame.function or '?'}` recompiles for each value of "
                f"`{guard.split(' == ')[0]}`"
                + (
                    f" ({', '.join(values[:8])}{', ...' if len(values) > 8 else ''})"
                    if values
                    else ""
                )
                + f": {len(items)} recompile{'s' if len(items) != 1 else ''}"
            )
            if loop:
                what += (
                    f"; its graphs grow with it ({', '.join(map(str, sizes[:6]))} operations): "
                    "it sets how many times a loop runs in the compiled code, unrolled"
                )
        what += "."
        if state_recompile(guard, frame.place):
            what = state_recompile_what(frame.function or "?", _short(guard))
            fixes = (first_step_eagerly(user),)
        elif lr_recompile(guard, frame.place):
            what = lr_recompile_what(frame.function or "?", _short(guard))
            built, name = _optimizer_line(capture)
            fixes = (lr_in_a_tensor(built or user, name),)
        found.append(
            Finding(
                kind="recompile",
                what=what,
                key=f"recompile:{frame.function}@{frame.file}:{frame.line}:{guard}",
                user=user,
                at=at,
                compile_ids=tuple(str(c.id) for c, _ in items),
                counts=Counts(recompiles=len(items), frames=1),
                cost=Cost(
                    compile_s=compile_seconds(c for c, _ in items),
                    note="compile time of the recompiles (forward and backward)",
                ),
                fixes=fixes,
            )
        )
    return found


def _graph_sizes(capture: Capture, key: FrameKey) -> list[int]:
    """The operations of each Dynamo graph a frame compiled, in compile order."""
    graphs = (c.graph("dynamo_output_graph") for c in capture if frame_key(c) == key)
    return [g.op_count for g in graphs if g is not None]


def _counts(values: list[str]) -> bool:
    """Values a guard saw that are all ints (a count), not flags or floats."""
    return bool(values) and all(v.lstrip("-").isdigit() for v in values)


def _optimizer_line(capture: Capture) -> tuple[Place | None, str]:
    """Where the user's code builds the optimizer, and its class, when the real steps saw
    exactly one (a log does not say)."""
    real = capture.timings.real_steps if capture.timings else None
    seen = [o for o in (real.optimizers if real else ()) if o.file and o.line]
    if len(seen) != 1:
        return None, seen[0].name if len({o.name for o in seen}) == 1 else ""
    return optimizer_place(seen[0], capture.cells), seen[0].name


def limit_findings(capture: Capture, registry: Registry | None = None) -> list[Finding]:
    """Frames that hit Dynamo's recompile limit: the calls past it run eagerly."""
    by_frame: dict[FrameKey, list[Compile]] = defaultdict(list)
    for c in capture:
        if _limit_hit(c):
            by_frame[frame_key(c)].append(c)
    said = " ".join(m.message for m in capture.messages if _LIMIT.search(m.message))
    found = []
    for key, hits in by_frame.items():
        frame = frame_of(capture, hits[0])
        user, at = frame_places(frame, capture)
        text = (hits[0].failure or "") + " " + said
        limit = _LIMIT_VALUE.search(text)
        value = int(next(g for g in limit.groups() if g)) if limit else None
        guards = [guard_of(r) for c in hits for r in c.recompile_reasons]
        all_reasons = [r for c in capture if frame_key(c) == key for r in c.recompile_reasons[:1]]
        fixes = guard_fixes(guards[0], user) if guards else ()
        # The rate a scheduler changes, held as a constant: raising the limit only compiles
        # the step once per rate; the rate in a tensor compiles it once.
        lr = any(lr_recompile(g, frame.place) for g in guards)
        if lr:
            built, name = _optimizer_line(capture)
            fixes = (lr_in_a_tensor(built or user, name),)
        # Raising the limit only compiles more values before the same end where the value
        # changes call after call (a counter, a float): offered for other guards, and for a
        # warm-up's learning rates (few, and known: the schedule's).
        if value is not None and (lr or not (guards and is_value_guard(guards[0]))):
            raised = Setting("torch._dynamo.config.recompile_limit", "set", value * 4)
            fixes += (
                Fix("setting", raised.python(), (raised,), source="torch's hint for GB0039",
                    tradeoff="more compiles of the same code, each with its own compile time"),
            )  # fmt: skip
        # The compiles that made a graph after the first; the attempt that hit the limit
        # compiled nothing, so it is no recompile.
        recompiles = [
            c for c in capture if frame_key(c) == key and c.recompile_reasons and not _limit_hit(c)
        ]
        found.append(
            Finding(
                kind="recompile_limit",
                what=f"`{frame.function or '?'}` hit the recompile limit"
                + (f" ({value})" if value is not None else "")
                + (
                    f": `{shown_source(guards[0])}` changed call after call and each value "
                    f"compiled again ({', '.join(guard_values(all_reasons)[:8])})"
                    if guards and guards[0].endswith("== <value>")
                    else f" after `{_short(guards[0])}` kept failing"
                    if guards
                    else ""
                )
                + (" (the learning rate, which a scheduler changes)" if lr else "")
                + "; calls past it run eagerly.",
                key=f"recompile_limit:{frame.function}@{frame.file}:{frame.line}",
                user=user,
                at=at,
                compile_ids=tuple(str(c.id) for c in [*recompiles, *hits]),
                counts=Counts(recompiles=len(recompiles), frames=1, eager_frames=1),
                cost=Cost(
                    compile_s=compile_seconds(recompiles),
                    note="calls past the limit run uncompiled; compile time of the recompiles "
                    "before it",
                ),
                fixes=fixes,
                torch=torch_texts(hits[0].failure or "", registry)[0] if hits[0].failure else None,
            )
        )
    return found


def failure_findings(capture: Capture, registry: Registry | None = None) -> list[Finding]:
    """Frames that failed to compile for another reason than a graph break or the recompile
    limit (those have their own findings): each runs eagerly."""
    broke = {frame_key(c) for c in capture if c.breaks_and_fallbacks}
    found = []
    for c in capture:
        if not c.failure or _limit_hit(c) or frame_key(c) in broke or c.status == OWN_HOOK_STATUS:
            continue
        frame = frame_of(capture, c)
        user, at = frame_places(frame, capture)
        texts = torch_texts(c.failure, registry)
        why = texts[-1].gb_type or c.failure.splitlines()[0][:120]
        found.append(
            Finding(
                kind="eager_frame",
                what=f"`{frame.function or '?'}` falls back to eager entirely: {why}.",
                key=f"eager_frame:{frame.function}@{frame.file}:{frame.line}:{why}",
                user=user,
                at=at,
                compile_ids=(str(c.id),),
                counts=Counts(frames=1, eager_frames=1),
                cost=Cost(note="the frame runs uncompiled every call"),
                fixes=hint_fixes(texts, user, at),
                torch=texts[0],
            )
        )
    return found


def _short(guard: str, width: int = 100) -> str:
    return guard if len(guard) <= width else guard[: width - 3] + "..."


def _limit_hit(c: Compile) -> bool:
    return bool(c.failure and _LIMIT.search(c.failure))
