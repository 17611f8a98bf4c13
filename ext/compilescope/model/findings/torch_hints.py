"""torch's own words about a graph break (gb id, type, explanation, hints), and fixes read from them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..place import Place
from .parts import Fix, Setting, TorchText

# A registry as trace/graph_break_registry.py reads it: "GB0291" -> versions, newest first.
Registry = Mapping[str, list[dict[str, Any]]]

_CHAINED = "*** While handling this graph break, another graph break occurred: ***"
_GB_ID = re.compile(r"/gb/(gb\d+)\.html", re.IGNORECASE)
_EXPLANATION = re.compile(
    r"^\s*Explanation:\s*(.*?)(?=^\s*Hint:|^\s*Developer debug context:|^\s*For more details|\Z)",
    re.MULTILINE | re.DOTALL,
)
_HINT = re.compile(r"^\s*Hint:\s*(.+)$", re.MULTILINE)
_CONTEXT = re.compile(r"Developer debug context:\s*(.*?)(?=\n\s*\n|\n\s*For more details|\Z)", re.S)
# Hints that advise no change (they ask for a bug report or point at another break).
_NOT_ADVICE = re.compile(
    r"report an issue|earlier graph break|tracing rules|Dynamo developers|TORCH_LOGS"
    r"|double check that your code|Please file an issue",
    re.IGNORECASE,
)
# Hints that say what the break is rather than what to do: after the advice (torch's data-
# dependent branch: "This graph break is fundamental ..." came first, `torch.cond` second).
_STATEMENT = re.compile(r"graph break is fundamental", re.IGNORECASE)
# `torch._dynamo.config.capture_scalar_outputs = True` in a hint: a setting to try.
_SET = re.compile(r"(torch\.[\w.]*config)\.(\w+)\s*=\s*(True|False|\d+(?:\.\d+)?)")
# "Add the logging method to `torch._dynamo.config.ignore_logging_functions`".
_ADD = re.compile(r"\badd(?:ing)?\b.*?\bto\s+`(torch\.[\w.]*config\.\w+)`", re.IGNORECASE)
_LOGGER = re.compile(r"<Logger (?P<name>.+?) \(\w+\)>\.(?P<method>\w+)")
_BUILTIN = re.compile(r"^builtin (?P<name>\w+)\b")

# What a setting may cost, in words (compilescope's notes, beside torch's hints).
TRADEOFFS = {
    "capture_scalar_outputs": "the value becomes a symbol in the graph; code that branches on "
    "it can still break, and on a GPU `.item()` still waits for the device",
    "capture_dynamic_output_shape_ops": "sizes that depend on the data become unbacked "
    "symbols: kernels are compiled for any size, and code that branches on them can still break",
    "ignore_logging_functions": "the call does nothing inside compiled code: its message is "
    "not printed",
    "reorderable_logging_functions": "the call runs after the graph, with the values it was "
    "given: its output moves",
}


def torch_texts(message: str, registry: Registry | None = None) -> tuple[TorchText, ...]:
    """torch's message parsed: the break, then any break hit while handling it (as in a frame
    that fell back to eager: "graph break in loop"); filled in from torch's registry."""
    blocks = [b for b in message.split(_CHAINED) if b.strip()] or [message]
    return tuple(_complete(_parse(block, message), registry) for block in blocks)


def _parse(block: str, message: str) -> TorchText:
    lines = block.splitlines()
    gb_type = ""
    for i, line in enumerate(lines):
        if line.strip().startswith("Explanation:"):
            gb_type = next((p.strip() for p in reversed(lines[:i]) if p.strip()), "")
            break
    gb_type = gb_type.removeprefix("Graph Break Reason:").strip()
    explanation = _EXPLANATION.search(block)
    context = _CONTEXT.search(block)
    gb_id = _GB_ID.search(block)
    return TorchText(
        gb_id=gb_id.group(1).upper() if gb_id else "",
        gb_type=gb_type,
        explanation=" ".join(explanation.group(1).split()) if explanation else "",
        hints=tuple(dict.fromkeys(h.strip() for h in _HINT.findall(block))),  # once each
        context=context.group(1).strip() if context else "",
        message=message,
    )


def _complete(text: TorchText, registry: Registry | None) -> TorchText:
    """Fill what the message leaves out from the registry, found by gb id or by type."""
    if not registry:
        return text
    versions = registry.get(text.gb_id, []) if text.gb_id else []
    gb_id = text.gb_id
    if not versions and text.gb_type:
        for key, entries in registry.items():
            if any(e.get("Gb_type") == text.gb_type for e in entries):
                gb_id, versions = key, entries
                break
    if not versions:
        return text
    entry = next((e for e in versions if e.get("Gb_type") == text.gb_type), versions[0])
    hints = text.hints or tuple(str(h).strip() for h in entry.get("Hints", ()) if str(h).strip())
    return TorchText(
        gb_id=gb_id,
        gb_type=text.gb_type or str(entry.get("Gb_type", "")),
        # The message's explanation has the placeholders filled in; the registry's does not.
        explanation=text.explanation or str(entry.get("Explanation", "")),
        hints=hints,
        context=text.context,
        message=text.message,
    )


def hint_fixes(
    texts: tuple[TorchText, ...], where: Place | None, at: Place | None = None
) -> tuple[Fix, ...]:
    """The fixes torch's hints name: settings first (they can be tried in one step), then the
    code changes it advises, at the line where the break is."""
    settings, changes = [], []
    for text in texts:
        source = f"torch's hint for {text.gb_id or text.gb_type}"
        for hint in text.hints:
            setting = _setting(hint, text.context, at or where)
            if setting is not None:
                name = setting.target.rsplit(".", 1)[-1]
                settings.append(
                    Fix(
                        "setting",
                        setting.python(),
                        (setting,),
                        tradeoff=TRADEOFFS.get(name, ""),
                        source=source,
                    )
                )
            elif not _NOT_ADVICE.search(hint) and not _SET.search(hint) and not _ADD.search(hint):
                changes.append(Fix("code", hint, change=hint, where=at or where, source=source))
        if not settings and not changes:
            ours = _our_change(text)
            if ours:
                changes.append(
                    Fix("code", ours, change=ours, where=at or where, source="compilescope")
                )
    changes.sort(key=lambda fix: bool(_STATEMENT.search(fix.change)))  # stable: torch's order
    seen, fixes = set(), []
    for fix in settings + changes:
        if (fix.title, fix.python()) not in seen:  # settings hold dicts: not hashable
            seen.add((fix.title, fix.python()))
            fixes.append(fix)
    return tuple(fixes)


def _setting(hint: str, context: str, at: Place | None) -> Setting | None:
    found = _SET.search(hint)
    if found:
        module, name, raw = found.groups()
        value: bool | int | float | None = {"True": True, "False": False}.get(raw)
        if value is None:
            value = float(raw) if "." in raw else int(raw)
        return Setting(f"{module}.{name}", "set", value)
    found = _ADD.search(hint)
    if found:
        if found.group(1).endswith("reorderable_logging_functions") and not _reorderable(context):
            return None  # torch would break on the call again, for another reason
        ref = object_ref(context, at)
        return Setting(found.group(1), "add", ref) if ref else None
    return None


# The argument kinds torch can move after the graph (torch/_dynamo/variables/misc.py,
# DebuggingVariable.can_reorder_logs: tensors, constants, string formatters).
_ARG_CLASS = re.compile(r"<class '[\w.]*?\.(\w+Variable)'>")
_REORDERABLE = {"TensorVariable", "ConstantVariable", "StringFormatVariable"}


def _reorderable(context: str) -> bool:
    """Whether a call's arguments, as torch's debug context lists their kinds, can be reordered
    (a call whose context lists none is given the benefit of the doubt)."""
    return set(_ARG_CLASS.findall(context)) <= _REORDERABLE


def object_ref(context: str, at: Place | None) -> dict[str, str] | None:
    """The live object a break's debug context names, as data to resolve when the fix is
    applied: a logger's method, or a builtin."""
    logger = _LOGGER.search(context)
    if logger:
        name, method = logger.group("name"), logger.group("method")
        module = module_of(at.file) if at else ""
        # The code at the break names the object as the module's global (`logger.warning_once(`).
        chain = re.search(rf"([A-Za-z_][\w.]*)\.{method}\s*\(", at.code) if at else None
        if module and chain:
            return {"ref": f"{module}:{chain.group(1)}.{method}"}
        return {"logger": name, "method": method}
    builtin = _BUILTIN.search(context)
    if builtin:
        return {"ref": f"builtins:{builtin.group('name')}"}
    return None


def module_of(path: str) -> str:
    """The import name of an installed package's file (`.../site-packages/a/b.py` -> `a.b`)."""
    path = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path and path.endswith(".py"):
            parts = path.split(marker, 1)[1][: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
    return ""


# Breaks whose hints advise no change (a bug report, a tracing rule): the change a user can make.
_NUMPY_FUNCTION = re.compile(r"numpy function: <function (\w+)")


def _our_change(text: TorchText) -> str:
    if text.gb_type == "attempted to trace numpy function unsupported by PyTorch":
        found = _NUMPY_FUNCTION.search(text.context)
        name = f"np.{found.group(1)}" if found else "this numpy function"
        return (
            f"Dynamo runs numpy through torch._numpy, which has no {name}: write it with torch "
            f"operations on tensors, or call {name} outside the compiled function"
        )
    return ""
