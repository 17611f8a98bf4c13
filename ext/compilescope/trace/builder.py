"""Build a Capture from structured-trace events: the one place both live and log captures meet."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from ..common import GRAPH_KINDS
from ..model.breaks import Fallback, GraphBreak, break_message
from ..model.capture import Capture, Skipped
from ..model.compile import CacheEvent, Compile, Frame, ShapeGuard, StageTime, Symbol
from ..model.compile_id import CompileId
from ..model.graph import Graph
from ..model.kernel import OutputCode
from ..model.place import Place
from .events import Event, SkipCounter
from .graph_text import parse_graph_nodes
from .notebook_cells import ipython_cell
from .output_code import lazy_output_code

_BREAK_AT = re.compile(r"Graph break in user code at (.*):(\d+)")
# Where a break message's user stack starts: symbolic_convert.py's log_graph_break, and
# convert_frame.py's message for a frame it skips.
_STACK_HEADINGS = ("User code traceback:", "The graph break occurred in the following user code:")
_CACHE = re.compile(r"^(\w+?_cache)_(hit|miss|bypass)$")

CellResolver = Callable[[str], "int | None"]


@dataclass
class _Draft:
    """Mutable gathering place for one compile id while events arrive."""

    id: CompileId
    frame: Frame = field(default_factory=Frame)
    graphs: dict[str, list[Graph]] = field(default_factory=dict)
    output_code: list[OutputCode] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    guards: str = ""
    recompile_reasons: list[str] = field(default_factory=list)
    restart_reasons: list[str] = field(default_factory=list)
    failure: str | None = None
    symbols: list[Symbol] = field(default_factory=list)
    shape_guards: list[ShapeGuard] = field(default_factory=list)
    stage_times: list[StageTime] = field(default_factory=list)
    open_stages: dict[object, list[float]] = field(default_factory=dict)  # name -> begin times
    open_count: int = 0  # stages begun and not yet ended, over all of open_stages
    cache_events: list[CacheEvent] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    backward_metrics: dict[str, Any] = field(default_factory=dict)
    artifacts: list[str] = field(default_factory=list)
    provenance: dict[str, str | None] = field(default_factory=dict)
    repros: list[str] = field(default_factory=list)

    def freeze(self) -> Compile:
        return Compile(
            id=self.id,
            frame=self.frame,
            graphs={k: tuple(v) for k, v in self.graphs.items()},
            output_code=tuple(self.output_code),
            graph_breaks=tuple(self.graph_breaks),
            fallbacks=tuple(self.fallbacks),
            guards=self.guards,
            recompile_reasons=tuple(self.recompile_reasons),
            restart_reasons=tuple(self.restart_reasons),
            failure=self.failure,
            symbols=tuple(self.symbols),
            shape_guards=tuple(self.shape_guards),
            stage_times=tuple(sorted(self.stage_times, key=lambda s: s.start_us)),
            cache_events=tuple(self.cache_events),
            metrics=self.metrics,
            backward_metrics=self.backward_metrics,
            artifacts=tuple(self.artifacts),
            repros=tuple(self.repros),
        )


class CaptureBuilder:
    """Feed events in log order with `add`; `build` returns the immutable Capture."""

    def __init__(
        self,
        strings: dict[int, str] | None = None,
        cell_resolver: CellResolver | None = None,
    ) -> None:
        self.strings: dict[int, str] = dict(strings or {})
        self.cell_resolver = cell_resolver or ipython_cell
        self.cells: dict[str, int] = {}  # the notebook cells of the frames and breaks, by file
        self.drafts: dict[CompileId, _Draft] = {}
        self.torch_version = ""
        self.ranks: set[int] = set()
        self.global_artifacts: list[str] = []
        self.skips = SkipCounter()
        self._chromium_ids: dict[tuple[str, int | None], CompileId | None] = {}

    # --- entry point ---------------------------------------------------------------------------
    def add(self, event: Event) -> None:
        try:
            self._add(event)
        except Exception as error:  # a malformed event must not lose the others
            self.skips.add(f"unreadable {event.name} event ({type(error).__name__})", event.line)

    def _add(self, event: Event) -> None:
        name = event.name
        if name == "str":
            text, index = event.metadata["str"]
            self.strings[int(index)] = text
            return
        cid = CompileId.from_metadata(event.metadata, event.rank)
        if cid.rank is not None:
            self.ranks.add(cid.rank)
        if name == "torch_version":
            payload = event.json_payload()
            if isinstance(payload, dict):
                self.torch_version = str(payload.get("pytorch_version", ""))
        if cid.is_global and name != "chromium_event":
            self.global_artifacts.append(name)
            return
        if name == "chromium_event":
            self._chromium(event, cid)
            return
        draft = self._draft(cid)
        draft.artifacts.append(name)
        handler = self._HANDLERS.get(name)
        if handler is not None:
            handler(self, draft, event)
        elif name in GRAPH_KINDS:
            self._graph(draft, event)
        else:
            cache = _CACHE.match(name)
            if cache:
                draft.cache_events.append(CacheEvent(cache.group(1), cache.group(2)))

    def _draft(self, cid: CompileId) -> _Draft:
        draft = self.drafts.get(cid)
        if draft is None:
            draft = self.drafts[cid] = _Draft(cid)
        return draft

    # --- handlers ------------------------------------------------------------------------------
    def _loc(self, frame: dict[str, Any]) -> Place:
        filename = frame.get("filename")
        file = (
            self.strings.get(filename, f"<file {filename}>")
            if isinstance(filename, int)
            else str(filename)
        )
        return Place(
            file,
            int(frame.get("line") or 0),
            str(frame.get("name", "")),
            str(frame.get("loc") or ""),
        )

    def _dynamo_start(self, draft: _Draft, event: Event) -> None:
        stack = tuple(self._loc(f) for f in event.body.get("stack", []) if isinstance(f, dict))
        if not stack:
            return
        top = stack[-1]
        self._note_cell(top.file)
        draft.frame = Frame(top.function, top.file, top.line, stack)

    def _note_cell(self, file: str) -> None:
        if file not in self.cells and (number := self.cell_resolver(file)) is not None:
            self.cells[file] = number

    def _graph(self, draft: _Draft, event: Event) -> None:
        text = event.payload or ""
        # An artifact's "name" is the graph kind; a DDP split child's is its submodule's.
        body = {k: v for k, v in event.body.items() if not (k == "name" and v == event.name)}
        graph = Graph(event.name, text, load_nodes=partial(parse_graph_nodes, text), metadata=body)
        draft.graphs.setdefault(event.name, []).append(graph)

    def _output_code(self, draft: _Draft, event: Event) -> None:
        path = str(event.body.get("filename") or event.body.get("file_path") or "")
        draft.output_code.append(lazy_output_code(event.payload or "", path))
        draft.provenance = {}

    def _provenance(self, draft: _Draft, event: Event) -> None:
        # Inductor logs provenance after the output code it describes.
        if not draft.output_code:
            return
        draft.provenance[event.name] = event.payload
        last = draft.output_code[-1]
        draft.output_code[-1] = lazy_output_code(last.text, last.path, draft.provenance)

    def _graph_break(self, draft: _Draft, event: Event) -> None:
        text = event.payload or ""
        at = _BREAK_AT.search(text)
        location = Place(at.group(1), int(at.group(2))) if at else None
        reason = text
        if "Graph Break Reason:" in reason:
            reason = reason.split("Graph Break Reason:", 1)[1]
        for heading in _STACK_HEADINGS:
            reason = reason.split(heading, 1)[0]
        reason = reason.strip()
        user_stack: tuple[Place, ...] = ()
        stack_at = next((h for h in _STACK_HEADINGS if h in text), None)
        if stack_at is not None:
            tail = text.split(stack_at, 1)[1].split("Traceback (most recent", 1)[0]
            user_stack = tuple(
                Place(f, int(n), fn.strip(), code.strip())
                for f, n, fn, code in re.findall(
                    r'File "([^"]*)", line (\d+), in (.*)\n\s*(.*)', tail
                )
            )
        if location is None and user_stack:  # convert_frame.py's message names no line
            location = Place(user_stack[-1].file, user_stack[-1].line)
        if location:
            self._note_cell(location.file)
        # Dynamo logs its fallbacks to eager under the same event name as its breaks.
        record = break_message(reason, location, user_stack, text)
        if isinstance(record, Fallback):
            draft.fallbacks.append(record)
        else:
            draft.graph_breaks.append(record)

    def _recompile(self, draft: _Draft, event: Event) -> None:
        payload = event.json_payload()
        if isinstance(payload, list):
            draft.recompile_reasons.extend(str(p) for p in payload)
        elif event.payload:
            draft.recompile_reasons.extend(reasons_in(event.payload))

    def _guards(self, draft: _Draft, event: Event) -> None:
        draft.guards = event.payload or ""

    def _metrics(self, draft: _Draft, event: Event) -> None:
        body = event.body
        draft.metrics = body
        if body.get("fail_reason"):
            draft.failure = f"{body.get('fail_type') or 'error'}: {body['fail_reason']}"
        reasons = body.get("restart_reasons") or []
        draft.restart_reasons = [str(r) for r in reasons] if isinstance(reasons, list) else []

    def _bwd_metrics(self, draft: _Draft, event: Event) -> None:
        draft.backward_metrics = event.body
        if event.body.get("fail_reason") and not draft.failure:
            draft.failure = f"backward: {event.body['fail_reason']}"

    def _symbol(self, draft: _Draft, event: Event) -> None:
        body = event.body
        stack = body.get("user_stack") or []
        loc = self._loc(stack[0]) if stack and isinstance(stack[0], dict) else None
        draft.symbols.append(
            Symbol(
                str(body.get("symbol", "")),
                str(body.get("source", "")),
                str(body.get("val", "")),
                str(body.get("vr", "")),
                loc,
            )  # fmt: skip
        )

    def _shape_guard(self, draft: _Draft, event: Event) -> None:
        body = event.body
        stack = body.get("user_stack") or []
        loc = self._loc(stack[-1]) if stack and isinstance(stack[-1], dict) else None
        expr = body.get("expr") or body.get("symbol")
        if expr:
            draft.shape_guards.append(ShapeGuard(str(expr), loc))

    def _chromium(self, event: Event, cid: CompileId) -> None:
        payload = event.json_payload()
        if not isinstance(payload, dict):
            return
        args = payload.get("args") or {}
        text = args.get("compile_id") if isinstance(args, dict) else None
        if isinstance(text, str):
            # Thousands of events name a handful of ids: parse each once.
            known: CompileId | Literal[False] | None = self._chromium_ids.get(
                (text, event.rank), False
            )
            if known is False:
                try:
                    parsed = CompileId.parse(text)
                    known = CompileId(
                        event.rank if parsed.rank is None else parsed.rank, *_id_fields(parsed)
                    )
                except ValueError:
                    known = None
                self._chromium_ids[(text, event.rank)] = known
            if known is not None:
                cid = known
        if cid.is_global:
            return
        draft = self._draft(cid)
        key, phase, ts = payload.get("name"), payload.get("ph"), payload.get("ts")
        if not isinstance(ts, (int, float)):
            return
        if phase == "B":
            draft.open_stages.setdefault(key, []).append(ts)
            draft.open_count += 1
        elif phase == "E" and draft.open_stages.get(key):
            start = draft.open_stages[key].pop()
            draft.open_count -= 1  # stages still open around this one: its depth
            draft.stage_times.append(
                StageTime(str(key), float(start), float(ts - start), draft.open_count)
            )

    def _repro(self, draft: _Draft, event: Event) -> None:
        if event.payload:
            draft.repros.append(event.payload)

    _HANDLERS = {
        "fx_graph_runnable": _repro,
        "dynamo_start": _dynamo_start,
        "inductor_output_code": _output_code,
        "inductor_provenance_tracking_node_mappings": _provenance,
        "inductor_provenance_tracking_kernel_stack_traces": _provenance,
        "dynamo_graph_break_reason": _graph_break,
        "recompile_reasons": _recompile,
        "dynamo_cpp_guards_str": _guards,
        "compilation_metrics": _metrics,
        "bwd_compilation_metrics": _bwd_metrics,
        "create_symbol": _symbol,
        "create_unbacked_symbol": _symbol,
        "guard_added_fast": _shape_guard,
        "guard_added": _shape_guard,
        "symbolic_shape_specialization": _shape_guard,
    }

    # --- result --------------------------------------------------------------------------------
    def build(self, source: str = "", extra_skips: Iterable[Skipped] = ()) -> Capture:
        for cid, draft in self.drafts.items():
            if cid.attempt and not draft.frame.function:
                # dynamo_start is logged once, under attempt 0; a restart compiles the same frame.
                first = self.drafts.get(CompileId(*_head_fields(cid), attempt=0))
                if first is not None:
                    draft.frame = first.frame
        compiles = tuple(d.freeze() for d in self.drafts.values() if d.artifacts or d.stage_times)
        skipped = tuple(extra_skips) + tuple(
            Skipped(reason, count, self.skips.first_line.get(reason))
            for reason, count in self.skips.counts.items()
        )
        return Capture(
            compiles=compiles,
            torch_version=self.torch_version,
            source=source,
            ranks=tuple(sorted(self.ranks)),
            skipped=skipped,
            global_artifacts=tuple(self.global_artifacts),
            cells=dict(self.cells),
        )


def reasons_in(text: str) -> list[str]:
    """The recompile reasons of a plain-text `recompile_reasons` artifact, one a line, each with
    the lines that continue it: torch 2.14 follows a reason with its "User stack trace:" and
    the indented frames (read as reasons of their own, they showed as four recompiles)."""
    reasons: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if reasons and (line[:1].isspace() or line.strip() == "User stack trace:"):
            reasons[-1] += "\n" + line
        else:
            reasons.append(line)
    return reasons


def _head_fields(cid: CompileId) -> tuple[int | None, int | None, int | None, int | None]:
    return (cid.rank, cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id)


def _id_fields(cid: CompileId) -> tuple[int | None, int | None, int | None, int]:
    return (cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, cid.attempt)


def build_capture(events: Iterable[Event], source: str = "", **kwargs: Any) -> Capture:
    builder = CaptureBuilder(**kwargs)
    for event in events:
        builder.add(event)
    return builder.build(source)


__all__ = ["CaptureBuilder", "build_capture", "OutputCode"]
