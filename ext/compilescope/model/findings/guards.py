"""Recompile guards: what a failed guard says (its source, the values it saw) and the fix that keeps it from failing."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..place import Place
from .catalog import remedy
from .parts import Fix, Setting

# "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6": the compile id it failed
# against, then the guard. Torch writes the values after the guard; grouping leaves them out.
_AGAINST = re.compile(r"^\s*(?:rank\d+:)?\[?(?:!\d+/)?\d+/\d+(?:_\d+)?\]?:\s*")
_VALUES = re.compile(r"\.?\s*expected (?P<expected>.*?), actual (?P<actual>.*)$")
_SIZE = re.compile(r"tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)")
_STRIDE = re.compile(r"tensor '(?P<name>[^']+)' stride mismatch at index (?P<dim>\d+)")
_DTYPE = re.compile(r"tensor '(?P<name>[^']+)' dtype mismatch")
# `___check_type_id(self, 1058181840)`: the number is an object's id in that process.
_OBJECT_ID = re.compile(r"(___check_(?:type|obj)_id\([^,]+,\s*)\d+")

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


def guard_values(reasons: Iterable[str]) -> list[str]:
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
    dtype = _DTYPE.search(guard)
    if dtype:
        # No automatic dynamic covers a dtype: each one compiles forward and backward again
        # (the fourth compile-time blind round's float32/float64/float16 batches: 3 graphs).
        name = dtype["name"] if dtype["name"].isidentifier() else "batch"
        one = remedy("one_input_dtype")
        return (one.fix(where, one.change.replace("{name}", name)),)
    stride = _STRIDE.search(guard)
    if stride:
        change = f"pass `{stride['name']}` with one memory layout every call (e.g. `.contiguous()`)"
        return (Fix("code", change, change=change, where=where, source="compilescope"),)
    return value_guard_fixes(guard, where)


def seen_values(reasons: Iterable[str]) -> list[str]:
    """The values a guard saw, in order: `expected 4, actual 6` then `expected 4, actual 8`."""
    seen: list[str] = []
    for reason in reasons:
        match = _VALUES.search(reason)
        if match:
            for value in (match["expected"], match["actual"]):
                if value not in seen:
                    seen.append(value)
    return seen


def dtype_guard(guard: str) -> re.Match[str] | None:
    """A dtype guard's tensor (`tensor 'x' dtype mismatch`), or None."""
    return _DTYPE.search(guard)


def size_guard(guard: str) -> re.Match[str] | None:
    """A size guard's tensor and dim (`tensor 'x' size mismatch at index 0`), or None."""
    return _SIZE.search(guard)


def plain_name(source: str) -> str:
    """A guard's source as the user's name: `return_attn` for `L['return_attn']`."""
    named = _LOCAL.match(source) or _GLOBAL.match(source)
    if named is None:
        return source
    groups = named.groupdict()
    return groups.get("quoted") or groups.get("plain") or groups.get("name") or source
