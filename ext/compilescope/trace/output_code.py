"""Split Inductor's output code into kernels: generated (Triton, C++, ...) and extern calls."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any, cast

from ..model.kernel import Kernel, OutputCode
from ..model.lazy import LazyTuple
from ..model.place import Place

# `name = async_compile.triton('name', '''...` / `name = async_compile.cpp_pybinding([...], r'''`:
# found as the text after a line's name, then read (_definitions).
_DEFINED = " = async_compile."
_NAME = re.compile(r"\w+")
_METHOD = re.compile(r"(\w+)\(")
_LANGUAGES = {"cpp_pybinding": "cpp", "cpp": "cpp", "triton": "triton", "cuda": "cuda",
              "halide": "halide", "rocm": "rocm", "mps": "metal"}  # fmt: skip
_AOT_ID = re.compile(r"^# AOT ID: \['([^']*)'\]", re.MULTILINE)
_ORIGINS = re.compile(r"# Topologically Sorted Source Nodes: \[(.*?)\], Original ATen: \[(.*?)\]")
_EXTERN_CALL = re.compile(
    r"\b(extern_kernels\.\w+|torch\.ops\.\w+\.\w+(?:\.\w+)?|aten\.\w+(?:\.\w+)?)\("
)
_NUM_GB = re.compile(r"['\"]kernel_num_gb['\"]:\s*([0-9.eE+-]+)")
# config.benchmark_kernel appends a benchmark harness to each Triton kernel's module; it is
# not the kernel, so the shown source stops there.
_HARNESS = re.compile(r"^def get_args\(\):", re.MULTILINE)
_STACK_FRAME = re.compile(r'File "([^"]*)", line (\d+), in ([^\n]*)\n([^\n]*)')


def split_output_code(text: str, path: str = "") -> OutputCode:
    """The kernels of one output module, with the origin comments Inductor wrote beside them."""
    aot_match = _AOT_ID.search(text)
    aot_id = aot_match.group(1) if aot_match else ""
    role = next((r for r in ("forward", "backward", "inference") if aot_id.endswith(r)), "")
    kernels: dict[str, dict[str, Any]] = {}
    for defined, method, start, end in _definitions(text):
        source = _string_literal_after(text, end)
        harness = _HARNESS.search(source)
        if harness:
            source = source[: harness.start()].rstrip() + "\n"
        num_gb = _NUM_GB.search(source)
        kernels[defined] = {
            "language": _LANGUAGES.get(method, method),
            "source": source,
            "bytes": float(num_gb.group(1)) * 1e9 if num_gb else None,
        }
        _add_origins(kernels[defined], _comment_block_before(text, start))
    calls: Counter[str] = Counter()
    call_body = _call_body(text)
    lines = call_body.splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        head = stripped.split("(", 1)[0].removesuffix(".run")  # Triton launches: `k.run(...)`
        name = None
        if head in kernels:
            name = head
        elif "extern_kernels." in stripped or "torch.ops." in stripped or "aten." in stripped:
            extern = _EXTERN_CALL.search(stripped)  # (none without one of those three)
            if extern:
                name = extern.group(1)
                kernels.setdefault(name, {"language": "extern", "source": ""})
        if name is None:
            continue
        calls[name] += 1
        # The origins comment sits just above the launch; a `stream0 = ...` line or, with
        # provenance tracking, a `# [Provenance debug handles]` line may come in between.
        above = [line.strip() for line in lines[max(0, index - 4) : index]]
        _add_origins(kernels[name], next((a for a in reversed(above) if _ORIGINS.search(a)), ""))
    built = tuple(
        Kernel(
            name=name,
            language=info["language"],
            source=info["source"],
            calls=calls[name],
            origin_nodes=tuple(dict.fromkeys(info.get("origins", ()))),
            aten_ops=tuple(dict.fromkeys(info.get("aten", ()))),
            bytes_moved=info.get("bytes"),
        )
        for name, info in kernels.items()
    )
    return OutputCode(text=text, path=path, aot_id=aot_id, role=role, kernels=built)


def lazy_output_code(
    text: str, path: str = "", provenance: dict[str, str | None] | None = None
) -> OutputCode:
    """The output module with its kernels split (and provenance attached) on first use: most of
    the time to open a big log went to kernels nobody had asked for yet. `provenance` maps
    Inductor's provenance event names to their payload text, decoded then too."""
    aot_match = _AOT_ID.search(text)
    aot_id = aot_match.group(1) if aot_match else ""
    role = next((r for r in ("forward", "backward", "inference") if aot_id.endswith(r)), "")
    kernels = LazyTuple(partial(_kernels, text, path, dict(provenance or {})))
    # Typed as the tuple it stands in for (equal to it, hashing as it): serialize reads the
    # field's annotation, so OutputCode.kernels stays tuple[Kernel, ...].
    return OutputCode(
        text=text, path=path, aot_id=aot_id, role=role, kernels=cast("tuple[Kernel, ...]", kernels)
    )


def _kernels(text: str, path: str, provenance: dict[str, str | None]) -> tuple[Kernel, ...]:
    code = split_output_code(text, path)
    if provenance:
        code = with_provenance(
            code,
            _json(provenance.get("inductor_provenance_tracking_node_mappings")),
            _json(provenance.get("inductor_provenance_tracking_kernel_stack_traces")),
        )
    return code.kernels


def _json(text: str | None) -> object:
    try:
        return json.loads(text) if text else None
    except (ValueError, RecursionError):
        return None


def with_provenance(code: OutputCode, node_mappings: object, stack_traces: object) -> OutputCode:
    """Attach Inductor's provenance (trace.provenance_tracking_level 1 or 2) to the kernels it names."""
    fused: dict[str, list[str]] = {}
    if isinstance(node_mappings, dict):
        for key in ("cppCodeToPost", "tritonCodeToPost", "kernelToPost"):
            mapping = node_mappings.get(key)
            if isinstance(mapping, dict):
                for handle, nodes in mapping.items():
                    if isinstance(nodes, list):
                        fused.setdefault(_kernel_name(handle), []).extend(map(str, nodes))
    # Frames as (file, line, function, code), Places made once duplicates are gone: a kernel's
    # traces repeat most frames, and equal tuples are equal Places.
    lines: dict[str, list[tuple[str, int, str, str]]] = {}
    if isinstance(stack_traces, dict):
        for handle, traces in stack_traces.items():
            if isinstance(traces, list):
                for trace in traces:
                    lines.setdefault(_kernel_name(handle), []).extend(_frames(str(trace)))
    kernels = []
    for kernel in code.kernels:
        nodes = tuple(dict.fromkeys(sorted(fused.get(kernel.name, ()))))
        locs = tuple(Place(*frame) for frame in dict.fromkeys(lines.get(kernel.name, ())))
        kernels.append(
            Kernel(
                **{
                    **kernel.__dict__,
                    "fused_nodes": nodes or kernel.fused_nodes,
                    "source_lines": locs or kernel.source_lines,
                }
            )  # fmt: skip
        )
    return OutputCode(code.text, code.path, code.aot_id, code.role, tuple(kernels))


def _kernel_name(handle: str) -> str:
    # Provenance keys are "kernel_name:debug_handle", e.g. "extern_kernels.mm:2".
    return handle.rsplit(":", 1)[0] if handle.rsplit(":", 1)[-1].isdigit() else handle


def _frames(trace: str) -> list[tuple[str, int, str, str]]:
    return [
        (file, int(line), function.strip(), code.strip())
        for file, line, function, code in _STACK_FRAME.findall(trace)
    ]


def _add_origins(info: dict[str, Any], comment: str) -> None:
    match = _ORIGINS.search(comment)
    if match:
        info.setdefault("origins", []).extend(_names(match.group(1)))
        info.setdefault("aten", []).extend(_names(match.group(2)))


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _comment_block_before(text: str, position: int) -> str:
    """The run of `#` comment lines right above a definition (Triton's can be long)."""
    block: list[str] = []
    end = position
    floor = max(0, position - 20000)
    while end > floor:
        # Walk back a line at a time: splitting 20 KB before every kernel cost more.
        start = max(text.rfind("\n", floor, end - 1) + 1, floor)
        line = text[start:end].rstrip("\r\n")
        end = start
        if not line.startswith("#"):
            if block or line.strip():
                break
            continue
        block.append(line)
    return "\n".join(reversed(block))


def _string_literal_after(text: str, position: int) -> str:
    """The first triple-quoted string literal after `position` (the kernel's source)."""
    starts = [(text.find(q, position), q) for q in ("'''", '"""')]
    starts = [(i, q) for i, q in starts if i >= 0]
    if not starts:
        return ""
    start, quote = min(starts)
    end = text.find(quote, start + 3)
    return text[start + 3 : end if end >= 0 else len(text)].strip("\n")


def _definitions(text: str) -> Iterator[tuple[str, str, int, int]]:
    """Each `name = async_compile.method(` that starts a line: name, method, where the line
    starts and where the call's arguments do. Found with str.find: a MULTILINE regex tried
    every position of a 100 KB module, a tenth of the time to read its kernels."""
    at = text.find(_DEFINED)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        method = _METHOD.match(text, at + len(_DEFINED))
        if method is not None and _NAME.fullmatch(text, start, at):
            yield text[start:at], method.group(1), start, method.end()
        at = text.find(_DEFINED, at + 1)


def _call_def(text: str) -> tuple[int, int] | None:
    """The first line that is `def call(self, args):` or `def call(args):` after spaces: its
    indent and where the signature ends (str.find, as _definitions)."""
    at = text.find("def call(")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip(" "):
            after = at + len("def call(")
            for rest in ("self, args):", "args):"):
                if text.startswith(rest, after):
                    return at - start, after + len(rest)
        at = text.find("def call(", at + 1)
    return None


def _call_body(text: str) -> str:
    """The wrapper's `call` function, where kernels are launched (module- or Runner-level)."""
    found = _call_def(text)
    if found is None:
        return ""
    indent, end = found
    body = []
    for line in text[end:].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)
