"""Recompiles grouped by the guard that failed, recompile-limit hits, and frames left uncompiled."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from ..capture import Capture
from ..compile import OWN_HOOK_STATUS, Compile, compile_seconds
from ..place import Place
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

# "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6": the compile id it failed
# against, then the guard. Torch writes the values after the guard; grouping leaves them out.
_AGAINST = re.compile(r"^\s*(?:rank\d+:)?\[?(?:!\d+/)?\d+/\d+(?:_\d+)?\]?:\s*")
_VALUES = re.compile(r"\.?\s*expected (?P<expected>.*?), actual (?P<actual>.*)$")
_SIZE = re.compile(r"tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)")
_STRIDE = re.compile(r"tensor '(?P<name>[^']+)' stride mismatch at index (?P<dim>\d+)")
# `___check_type_id(self, 1058181840)`: the number is an object's id in that process.
_OBJECT_ID = re.compile(r"(___check_(?:type|obj)_id\([^,]+,\s*)\d+")
_LIMIT = re.compile(r"recompile limit exceeded|hit config\.(\w*recompile_limit)", re.IGNORECASE)
_LIMIT_VALUE = re.compile(r"currently set to (\d+)|recompile_limit \((\d+)\)")

_DYNAMIC_TRADEOFF = "every size becomes a symbol: kernels are compiled for any size"
_MARK_TRADEOFF = "that size is compiled for any value (torch guards that it stays above 1)"
# `args[0]`: a positional input of torch's compile wrapper (`inner(*args, **kwargs)`).
_POSITIONAL = re.compile(r"args\[(?P<i>\d+)\]")
_ORDINAL = {0: "first", 1: "second", 2: "third", 3: "fourth"}
# A guard on a string's value (`task == 'age'`).
_STRING_VALUE = re.compile(r"==\s*(?:'[^']*'|\"[^\"]*\")\s*$")


# A guard on a Python value (`self.step == 7`, `G['CALLS'] == 10`, `scale == 0.5`): one cause
# whatever the value, so the value is left out of the group (issue 42: one finding per cause).
_VALUE_GUARD = re.compile(
    r"^(?P<source>[\w.\[\]'\"()]+?)\s*==\s*(?P<value>-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|True|False)$"
)
# A float Dynamo keeps as a number (dropout's `p`): `___as_tensor(p).item() == 0.0993`.
_AS_TENSOR = re.compile(r"^___as_tensor\((?P<source>[^()]+)\)\.item\(\)$")
_MODULE_ATTR = re.compile(r"^(?:L\['self'\]|self)(?:\._modules\['[^']+'\]|\.\w+)*\.(?P<attr>\w+)$")
_GLOBAL = re.compile(r"^G\['(?P<name>\w+)'\]$")
_LOCAL = re.compile(r"^(?:L\['(?P<quoted>\w+)'\]|(?P<plain>\w+))$")
_DICT_KEY = re.compile(r"___dict_contains\('(?P<key>[^']+)',\s*(?P<dict>[^)]+)\)")
_LEN = re.compile(r"^len\((?P<source>[^)]+)\)\s*==\s*\d+$")


def guard_of(reason: str) -> str:
    """A recompile reason without the compile id it failed against, the values seen, the
    source comment torch appends, and object ids (they differ from run to run); a guard on a
    Python value keeps its source, not the value."""
    guard = _VALUES.sub("", _AGAINST.sub("", reason).split("  #", 1)[0])
    guard = _OBJECT_ID.sub(r"\1<id>", guard).strip().splitlines()[0].strip() if guard else guard
    value = _VALUE_GUARD.match(guard)
    if value:
        return f"{value['source']} == <value>"
    length = _LEN.match(guard)
    if length:
        return f"len({length['source']}) == <value>"
    return guard


def _guard_values(reasons: Iterable[str]) -> list[str]:
    """The values a Python-value guard was compiled for, in order (`7`, `8`, ...)."""
    seen: list[str] = []
    for reason in reasons:
        guard = _OBJECT_ID.sub("", _AGAINST.sub("", reason).split("  #", 1)[0]).strip()
        match = _VALUE_GUARD.match(guard.splitlines()[0].strip() if guard else "")
        if match and match["value"] not in seen:
            seen.append(match["value"])
    return seen


def shown_source(guard: str) -> str:
    """What a value guard guards, as the user wrote it: `p` for `___as_tensor(p).item()`."""
    source = guard.split(" == ", 1)[0]
    unwrapped = _AS_TENSOR.match(source)
    return unwrapped["source"] if unwrapped else source


def is_value_guard(guard: str) -> bool:
    """A guard on a Python value (int, float, bool, a dict's keys, a list's length)."""
    return guard.endswith("== <value>") or bool(_DICT_KEY.search(guard))


# Dynamo's guard when a specialized object is gone: "L['self'] got deallocated".
_FREED = re.compile(r"(?:L|G)\[['\"](?P<name>[^'\"]+)['\"]\] got deallocated")


def flag_fix(name: str, where: Place | None) -> Fix:
    """A flag (`return_attn=True`) that selects what the code returns: a graph per value,
    which a tensor cannot replace. Rare values are better run uncompiled (the third
    compile-time blind round's debug flags: 4 graphs, 1 with eager_on_recompile, 1.46x)."""
    change = (
        f"after the first calls, `torch.compiler.set_stance('eager_on_recompile')`: a new value "
        f"of `{name}` then runs eagerly instead of compiling again; or call the uncompiled model "
        f"(`compiled._orig_mod(...)`) for the rare calls that set `{name}`"
    )
    return Fix(
        "code",
        f"run the rare values of `{name}` uncompiled",
        change=change,
        where=where,
        tradeoff="those calls run eagerly (slower each, but no compile); a value used often "
        "deserves its own graph",
        source="torch.compiler.set_stance docs (eager_on_recompile)",
    )


def value_guard_fixes(guard: str, where: Place | None) -> tuple[Fix, ...]:
    """What stops a changing Python value being guarded: the value in a tensor (or a buffer),
    an int attribute of a module made dynamic, the same keys or length every call."""
    source = guard.split(" == ", 1)[0]
    unwrapped = _AS_TENSOR.match(source)
    if unwrapped:
        source = unwrapped["source"]
    attr = _MODULE_ATTR.match(source)
    if attr:
        name = attr["attr"]
        unspec = Setting("torch._dynamo.config.allow_unspec_int_on_nn_module", "set", True)
        return (
            Fix(
                "code",
                f"keep `self.{name}` in a tensor buffer",
                change=f"`self.register_buffer('{name}', torch.zeros((), dtype=torch.long))` "
                f"and update it in place (`self.{name} += 1`): a tensor's value is data, "
                "not a guard (one compile)",
                where=where,
                tradeoff="reading it as a Python number (`int(...)`, `if self.x:`) breaks "
                "the graph; use tensor ops (`torch.where`) on it. It removes the recompiles "
                "(their compile time); the step then runs compiled, which is not always faster "
                "than the eager fallback (a small blind-set loop on an H100: 0.91x)",
                source="torch.compile troubleshooting: recompilations",
            ),
            Fix(
                "setting",
                f"Make int attributes of modules (`self.{name}`) dynamic",
                (unspec,),
                tradeoff="one recompile when the value first changes, then one graph for every "
                "value (the int becomes a symbol); a float attribute still needs a tensor",
                source="torch's recompile hint for integer attributes of nn.Module",
            ),
        )
    glob = _GLOBAL.match(source)
    local = _LOCAL.match(source)
    if (glob or local) and _STRING_VALUE.search(guard):
        # A string (a task or mode name) has no tensor form: compile the part that does not
        # depend on it once (the second compile-time blind round's multi-task CNN: each task
        # name compiled the shared backbone again; 50 -> 27 s compiling only the backbone).
        name = glob["name"] if glob else (local["quoted"] or local["plain"]) if local else ""
        change = (
            f"compile only the part that does not depend on `{name}` (the shared backbone: "
            "`model.backbone.compile()`), or insert `torch._dynamo.graph_break()` where the "
            f"code starts to branch on `{name}`: the shared part is compiled once, and each "
            f"value of `{name}` compiles only the small part after the break"
        )
        return (
            Fix(
                "code",
                f"keep the code that branches on `{name}` out of the shared graph",
                change=change,
                where=where,
                tradeoff="the part after the break runs as a graph per value (or eagerly): "
                "no fusion across the break",
                source="torch.compile docs: dealing with recompilations (graph breaking to "
                "reduce recompilation costs)",
            ),
        )
    if glob or local:
        name = glob["name"] if glob else (local["quoted"] or local["plain"]) if local else ""
        what = "global" if glob else "argument"
        return (
            Fix(
                "code",
                f"pass `{name}` as a tensor",
                change=f"the {what} `{name}` changes call after call and each value compiles "
                f"again: pass it in a 0-d tensor (`torch.tensor({name})`), or keep the "
                "changing value out of the compiled function",
                where=where,
                tradeoff="a tensor's value is data: reading it as a Python number inside "
                "breaks the graph. It removes the recompiles (their compile time); the step "
                "then runs compiled, which is not always faster than the eager fallback (two "
                "small blind-set loops on an H100: 0.86x and 0.91x)",
                source="torch.compile troubleshooting: recompilations",
            ),
        )
    key = _DICT_KEY.search(guard)
    if key:
        return (
            Fix(
                "code",
                f"pass the same keys every call (`{key['key']}` comes and goes)",
                change=f"give `{key['dict']}` the key `{key['key']}` on every call (e.g. "
                f"`{key['key']}=None` where there is none) and branch on the value",
                where=where,
                tradeoff="one graph for both cases; a branch on None is still resolved when "
                "tracing",
                source="torch.compile troubleshooting: recompilations",
            ),
        )
    if guard.startswith("len("):
        return (
            Fix(
                "code",
                "the same length every call",
                change=f"`{guard.split(' == ')[0]}` changes: pad or stack the items into one "
                "tensor so the length is a size Dynamo can make dynamic",
                where=where,
                source="torch.compile troubleshooting: recompilations",
            ),
        )
    return ()


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
        seen = _values(reason for _, reason in items)
        size = _SIZE.search(guard)
        what = f"`{frame.function or '?'}` recompiles: `{_short(guard)}` failed"
        if size:
            what = (
                f"`{frame.function or '?'}` recompiles when dim {size['dim']} of "
                f"`{size['name']}` changes" + (f" ({', '.join(seen)})" if seen else "")
            )
        fixes = guard_fixes(guard, user)
        if is_value_guard(guard):
            values = _guard_values(reason for _, reason in items)
            if values and set(values) <= {"True", "False"}:
                source = shown_source(guard)
                named = _LOCAL.match(source) or _GLOBAL.match(source)
                flag = (named.groupdict().get("quoted") or named.groupdict().get("plain")
                        or named.groupdict().get("name")) if named else None  # fmt: skip
                fixes = (flag_fix(flag or source, user), *fixes)
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


def _optimizer_line(capture: Capture) -> tuple[Place | None, str]:
    """Where the user's code builds the optimizer, and its class, when the real steps saw
    exactly one (a log does not say)."""
    real = capture.timings.real_steps if capture.timings else None
    seen = [o for o in (real.optimizers if real else ()) if o.file and o.line]
    if len(seen) != 1:
        return None, seen[0].name if len({o.name for o in seen}) == 1 else ""
    return optimizer_place(seen[0], capture.cells), seen[0].name


def guard_fixes(guard: str, where: Place | None) -> tuple[Fix, ...]:
    """What keeps a guard from failing: a size marked dynamic, or a layout kept the same."""
    size = _SIZE.search(guard)
    if size:
        name, dim = size["name"], int(size["dim"])
        dynamic = Setting("dynamic", "compile_kwarg", True)
        whole = Fix("setting", "Compile with dynamic=True", (dynamic,), tradeoff=_DYNAMIC_TRADEOFF,
                    source="compilescope")  # fmt: skip
        positional = _POSITIONAL.fullmatch(name)
        if positional:
            # `torch.compile(model)` compiles torch's wrapper `inner(*args, **kwargs)`: the
            # guard names the model's positional input (the second compile-time blind round's
            # batch size that varies from the second call: dynamic=True gained nothing there).
            nth = _ORDINAL.get(int(positional["i"]), f"number {int(positional['i']) + 1}")
            change = (
                f"`torch._dynamo.mark_dynamic(x, {dim})` on the {nth} tensor you pass to the "
                "compiled model, before its first call: the first compile is dynamic in that "
                "size, and the static graph compiled first is not thrown away"
            )
            return (
                Fix("code", f"Mark dim {dim} of the model's {nth} input dynamic before the first call",
                    change=change, where=where, tradeoff=_MARK_TRADEOFF,
                    source="torch.compile docs: reducing compile time (mark_dynamic)"),
                whole,
            )  # fmt: skip
        if not name.isidentifier():
            # A source only Dynamo can name (`___from_numpy(___stack1)`, a resume function's
            # stack): nothing a user could mark; dynamic=True still reaches it.
            return (whole,)
        mark = Setting(name, "mark_dynamic", dim)
        return (
            Fix(
                "setting",
                f"Mark dim {dim} of `{name}` dynamic before the first call",
                (mark,),
                tradeoff=_MARK_TRADEOFF,
                source="compilescope",
            ),
            whole,
        )
    if "requires_grad mismatch" in guard:
        # Unfreezing stage by stage (`p.requires_grad_(True)` between calls): each change is a
        # guard failure, forward and backward compiled again (the third compile-time blind
        # round's gradual unfreezing: 4 graphs; 1 keeping requires_grad on, 1.44x).
        change = (
            "keep `requires_grad=True` on every parameter and freeze by leaving the frozen ones "
            "out of the optimizer: add them when they unfreeze (`opt.add_param_group({'params': "
            "block.parameters()})`), so the compiled model sees the same requires_grad every call"
        )
        return (
            Fix("code", "freeze through the optimizer, not by toggling requires_grad",
                change=change, where=where,
                tradeoff="the frozen part's gradients are still computed (its backward runs) "
                "until it unfreezes; to skip that too, compile once per stage knowingly",
                source="pytorch/pytorch#139476 (requires_grad changes recompile)"),
        )  # fmt: skip
    freed = _FREED.search(guard)
    if freed:
        # An object the compiled code was specialized on was freed and a new one passed in
        # its place: a new optimizer (or model) built every epoch (the third compile-time blind
        # round's AdamW re-created per epoch: 5 graphs, 2 built once, 1.27x).
        name = freed["name"]
        change = (
            f"create the object passed as `{name}` once, outside the loop, and reuse the same "
            "object every call (a new optimizer or module each epoch is a new object: the "
            "compiled code for the old one is thrown away and compiled again)"
        )
        return (
            Fix("code", f"reuse one `{name}` object instead of a new one each time",
                change=change, where=where,
                tradeoff="to reset an optimizer's state, clear it in place "
                "(`opt.state.clear()`) instead of building a new one",
                source="pytorch/pytorch#120814 (a new optimizer per epoch recompiles)"),
        )  # fmt: skip
    stride = _STRIDE.search(guard)
    if stride:
        change = f"pass `{stride['name']}` with one memory layout every call (e.g. `.contiguous()`)"
        return (Fix("code", change, change=change, where=where, source="compilescope"),)
    return value_guard_fixes(guard, where)


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
                    f"compiled again ({', '.join(_guard_values(all_reasons)[:8])})"
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


def _values(reasons: Iterable[str]) -> list[str]:
    """The values a guard saw, in order: `expected 4, actual 6` then `expected 4, actual 8`."""
    seen: list[str] = []
    for reason in reasons:
        match = _VALUES.search(reason)
        if match:
            for value in (match["expected"], match["actual"]):
                if value not in seen:
                    seen.append(value)
    return seen
