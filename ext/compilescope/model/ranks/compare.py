"""Two ranks' records compared compile by compile, each only as far as its log goes."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..compile_id import CompileId
from ..record_text import headline, text_difference
from .log import RankLog
from .records import (
    ASPECTS,
    RankCompile,
    aspect_key,
    aspect_value,
    rank_compile,
    without_device_index,
)

if TYPE_CHECKING:
    from ..compile import Compile

ASPECT_NAMES = tuple(name for name, _ in ASPECTS)
ASPECT_LABEL = dict(ASPECTS)


class CompileLookup(Protocol):
    """What names a differing node: a Capture, or something that reads a rank's log when asked."""

    def __getitem__(self, key: CompileId) -> Compile: ...


class RankedCompiles(Protocol):
    """What ranks' records are made from: a `Capture` (model/capture.py, above this module)."""

    @property
    def ranks(self) -> tuple[int, ...]: ...  # the ranks it holds compiles of
    @property
    def rank_logs(self) -> tuple[RankLog, ...]: ...
    @property
    def compiles(self) -> tuple[Compile, ...]: ...
    def rank(self, rank: int) -> RankedCompiles:
        """One rank's compiles and logs."""
        ...


@dataclass(frozen=True)
class RankRecord:
    """One rank's compiles as ranks are compared, and how far its record can be trusted."""

    rank: int
    compiles: tuple[RankCompile, ...] = ()
    logs: tuple[RankLog, ...] = ()  # the files it was read from (none: a live capture)
    ends_early: str = ""  # why the record stops before the rank's own end ("" when it does not)
    partial: frozenset[str] = frozenset()  # compiles the early end may have left half-logged
    damaged: frozenset[str] = frozenset()  # compiles with entries lost in the middle of a log
    nothing: str = ""  # why there is nothing of it to compare ("" when there is)

    @property
    def complete(self) -> bool:
        return not self.ends_early and not self.damaged and not self.nothing

    @property
    def ids(self) -> list[str]:
        return [c.compile_id for c in self.compiles]


@dataclass(frozen=True)
class Parting:
    """Where two records first differ: the aspect, the compile id, and (when asked) in words."""

    aspect: str
    compile_id: str
    detail: str = ""


def records_of(capture: RankedCompiles, world_size: int | None = None) -> dict[int, RankRecord]:
    """Every rank the capture knows of (its compiles, its logs, the world size), as a record."""
    ranks = set(capture.ranks) | {log.rank for log in capture.rank_logs}
    ranks |= set(range(world_size or 0))
    records = {}
    for rank in sorted(ranks):
        mine = capture.rank(rank)
        records[rank] = _record(rank, tuple(mine.compiles), mine.rank_logs, rank in capture.ranks)
    return records


def absent_record(rank: int) -> RankRecord:
    """The record of a rank the job had but nothing was found of."""
    return _record(rank, (), (), False)


def _record(
    rank: int, compiles: tuple[Compile, ...], logs: tuple[RankLog, ...], known: bool
) -> RankRecord:
    profile = tuple(rank_compile(c) for c in compiles)
    ends_early = "; ".join(dict.fromkeys(log.ends_early for log in logs if log.ends_early))
    damaged = frozenset(cid for log in logs for cid in log.damaged)
    nothing = ""
    if not logs and not known:
        nothing = "no log or saved capture of it was found"
    elif not compiles:
        if ends_early:
            empty = all(log.empty for log in logs)
            nothing = ends_early if empty else f"it stops before its first compile ({ends_early})"
        elif any(log.saved_capture for log in logs):
            pass  # a saved capture of no compiles is complete: the rank compiled nothing
        elif all(log.empty for log in logs):
            nothing = "its log is empty"
        else:
            # A TORCH_TRACE log cannot tell a rank that never compiled from one that stopped
            # before its first compile; a saved capture of no compiles can (it is complete).
            nothing = "its log holds no compile: it never compiled, or stopped before it did"
    partial: frozenset[str] = frozenset()
    if ends_early:
        partial = frozenset(log.last_compile_id for log in logs if log.ends_early) - {""}
        partial |= {str(_bare(c.id)) for c in compiles if _unfinished(c, compiles)}
    return RankRecord(rank, profile, logs, ends_early, partial, damaged, nothing)


def _bare(cid: CompileId) -> CompileId:
    return CompileId(None, *_fields(cid))


def _unfinished(c: Compile, compiles: tuple[Compile, ...]) -> bool:
    """No compilation_metrics (torch logs them as a compile ends) and no later attempt of it."""
    if c.metrics:
        return False
    head = _fields(c.id)[:3]
    return not any(_fields(o.id)[:3] == head and o.id.attempt > c.id.attempt for o in compiles)


def _fields(cid: CompileId) -> tuple[int | None, int | None, int | None, int]:
    return (cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, cid.attempt)


def merged_order(mine: list[str], theirs: list[str]) -> list[str]:
    """Both ranks' compile ids in log order: the reference's, with the other's own inserted
    after the compile that preceded them."""
    order = list(theirs)
    previous: str | None = None
    for cid in mine:
        if cid not in order:
            after = order.index(previous) + 1 if previous is not None and previous in order else 0
            order.insert(after, cid)
        previous = cid
    return order


def beyond_end(cid: str, have: RankRecord, lack: RankRecord) -> bool:
    """`lack`'s record ends early, and in `have`'s log `cid` comes after every compile `lack`
    logged: what `lack` did there is unknown, so it is not compared."""
    return bool(lack.ends_early) and after_last(cid, have, lack)


def after_last(cid: str, have: RankRecord, lack: RankRecord) -> bool:
    """In `have`'s log, `cid` comes after every compile `lack` logged."""
    order = have.ids
    if cid not in order:
        return False
    mine = set(lack.ids)
    reached = max((i for i, c in enumerate(order) if c in mine), default=-1)
    return order.index(cid) > reached


def not_compared(record: RankRecord, reference: RankRecord) -> list[str]:
    """The reference's compile ids past where `record`'s early-ending log stops."""
    return [cid for cid in reference.ids if beyond_end(cid, reference, record)]


def first_parting(
    a: RankRecord,
    b: RankRecord,
    aspects: Iterable[str] = ASPECT_NAMES,
    words: tuple[str, str] | None = None,
    capture: CompileLookup | None = None,
) -> Parting | None:
    """The first compile (in log order) where `a` and `b` differ in one of `aspects`; None when
    they agree as far as both records go. A compile the early end of a log may have cut is
    compared as a prefix (what was logged of it must begin what the other logged); compile ids
    past the end of a log, and compiles with lost entries, are not compared. `words` (names of
    a and b) asks for the difference in words; `capture` adds the first differing node."""
    aspects = tuple(aspects)
    mine, theirs = {c.compile_id: c for c in a.compiles}, {c.compile_id: c for c in b.compiles}
    for cid in merged_order(a.ids, b.ids):
        x, y = mine.get(cid), theirs.get(cid)
        if x is None or y is None:
            have, lack = (a, b) if y is None else (b, a)
            if beyond_end(cid, have, lack):
                continue
            only = x if x is not None else y
            assert only is not None  # cid is one of mine or theirs
            for aspect in aspects:
                if aspect == "compile ids" or aspect_value(only, aspect):
                    swap = words if words is None or x is not None else (words[1], words[0])
                    return Parting(aspect, cid, _extra_detail(only, aspect, swap))
            continue
        if cid in a.damaged or cid in b.damaged:
            continue  # both have it; what it holds is not whole on one of them
        cut = (cid in a.partial, cid in b.partial)
        for aspect in aspects:
            p, q = aspect_value(x, aspect), aspect_value(y, aspect)
            if (p != q) if not any(cut) else not _compatible(aspect, p, q, cut):
                detail = ""
                if words is not None:
                    detail = _detail(aspect, cid, x, y, words, capture, (a.rank, b.rank))
                return Parting(aspect, cid, detail)
    return None


def _prefix(p: tuple[object, ...], q: tuple[object, ...]) -> bool:
    return p == q[: len(p)]


def _begins(p: tuple[object, ...], q: tuple[object, ...], cut: tuple[bool, bool]) -> bool:
    """The cut side's sequence begins the other's (either way when both are cut)."""
    a_cut, b_cut = cut
    return (a_cut and _prefix(p, q)) or (b_cut and _prefix(q, p))


def _compatible(
    aspect: str, p: tuple[object, ...], q: tuple[object, ...], cut: tuple[bool, bool]
) -> bool:
    """Whether a compile logged in part on one side can be the same as on the other."""
    if aspect == "compile ids":  # (status, recompile reasons): the status is not known yet
        return _begins(_items(p[1]), _items(q[1]), cut)
    if aspect == "graphs":  # (kind, hash) in pipeline order: each kind's graphs as a prefix
        mine, theirs = _by_kind(p), _by_kind(q)
        return all(
            _begins(mine.get(kind, ()), theirs.get(kind, ()), cut) for kind in {*mine, *theirs}
        )
    if aspect == "collectives":
        return True  # read from the latest stage logged, which a cut changes; graphs compare
    if aspect == "inputs":  # read from Dynamo's graph: the same, or not logged yet
        return p == q or (cut[0] and not p) or (cut[1] and not q)
    return _begins(p, q, cut)


def _items(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else ()


def _by_kind(hashes: tuple[object, ...]) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for item in hashes:
        kind, digest = _items(item)
        out[str(kind)] = (*out.get(str(kind), ()), digest)
    return out


def group_ranks(
    records: list[RankRecord], aspects: Iterable[str] = ASPECT_NAMES
) -> tuple[tuple[int, ...], ...]:
    """Ranks that agree on `aspects`, largest group first (ties: the group with the lowest
    rank). Complete records first, grouped by equal keys then merged where they do not part;
    then each incomplete one joins the first group it does not part from, as far as it goes."""
    aspects = tuple(aspects)
    by_key: dict[tuple[object, ...], list[RankRecord]] = {}
    for r in records:
        if r.complete:
            by_key.setdefault(tuple(aspect_key(r.compiles, a) for a in aspects), []).append(r)
    groups: list[list[RankRecord]] = []
    members: list[list[RankRecord]] = [*by_key.values(), *([r] for r in records if not r.complete)]
    for these in members:
        for group in groups:
            if first_parting(these[0], group[0], aspects) is None:
                group.extend(these)
                break
        else:
            groups.append(list(these))
    found = [tuple(sorted(r.rank for r in g)) for g in groups]
    return tuple(sorted(found, key=lambda g: (-len(g), g[0])))


def _verb(many: bool, verb: str) -> str:
    """`rank 1 compiles`, `ranks 0, 2 compile`."""
    return verb if many else verb + ("es" if verb.endswith("o") else "s")


def _many(words: str) -> bool:
    return words.startswith("ranks ")


def _extra_detail(only: RankCompile, aspect: str, words: tuple[str, str] | None) -> str:
    """A compile one side has and the other does not (words: the one that has it first)."""
    if words is None:
        return ""
    who, others = words
    why = f" (recompile: {headline(only.recompile_reasons[0])})" if only.recompile_reasons else ""
    base = (
        f"{who} {_verb(_many(who), 'compile')} {only.compile_id}{why}; "
        f"{others} {_verb(_many(others), 'do')} not"
    )
    if aspect == "compile ids":
        return base
    shown = aspect_value(only, aspect)
    return f"{base}: its {ASPECT_LABEL[aspect]}: {len(shown)}, first {headline(shown[0])}"


def _detail(
    aspect: str,
    cid: str,
    x: RankCompile,
    y: RankCompile,
    words: tuple[str, str],
    capture: CompileLookup | None,
    ranks: tuple[int, int],
) -> str:
    who, others = words
    if aspect == "compile ids":
        if x.status == y.status:  # the guards differ: say where in them
            reasons = _sequence_detail(x.recompile_reasons, y.recompile_reasons)
            return f"{who} vs {others}: recompile reason {reasons}"
        return (
            f"{who}: {x.status} {[headline(r) for r in x.recompile_reasons]}; "
            f"{others}: {y.status} {[headline(r) for r in y.recompile_reasons]}"
        )
    p, q = aspect_value(x, aspect), aspect_value(y, aspect)
    detail = ""
    if aspect == "graphs" and capture is not None:
        try:
            detail = _graph_detail(capture, ranks, cid, x.graph_hashes, y.graph_hashes)
        except LookupError:  # a rank that left only its summary: its graphs are not at hand
            detail = ""
    detail = detail or _sequence_detail(p, q)
    return f"{who} vs {others}: {detail}"


def _sequence_detail(x: tuple[object, ...], y: tuple[object, ...]) -> str:
    for i, (p, q) in enumerate(zip(x, y, strict=False)):
        if p != q:
            if isinstance(p, str) and isinstance(q, str):  # a whole reason: where it differs
                return f"#{i + 1} {text_difference(p, q)}"
            return f"#{i + 1} is {p} vs {q}"
    if len(x) > len(y):
        return f"{len(x)} vs {len(y)}; first extra: {headline(x[len(y)])}"
    return f"{len(x)} vs {len(y)}; first missing: {headline(y[len(x)])}"


def _graph_detail(
    capture: CompileLookup,
    ranks: tuple[int, int],
    cid: str,
    x: tuple[tuple[str, str], ...],
    y: tuple[tuple[str, str], ...],
) -> str:
    """Which graph differs first, and its first differing node (parsed only here)."""
    for i, (p, q) in enumerate(zip(x, y, strict=False)):
        if p == q:
            continue
        kind = p[0]
        if kind != q[0]:
            return f"{kind} vs {q[0]}"
        base = CompileId.parse(cid)
        ga = capture[CompileId(ranks[0], *_fields(base))].graphs[kind]
        gb = capture[CompileId(ranks[1], *_fields(base))].graphs[kind]
        number = sum(1 for h in x[:i] if h[0] == kind)
        na = [without_device_index(n.describe()) for n in ga[number].nodes]
        nb = [without_device_index(n.describe()) for n in gb[number].nodes]
        matcher = difflib.SequenceMatcher(None, na, nb, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                left = na[i1] if i1 < i2 else "(nothing)"
                right = nb[j1] if j1 < j2 else "(nothing)"
                return f"{kind} first differs at {left!r} vs {right!r}"
        return f"{kind} text differs (same nodes)"
    return f"{len(x)} vs {len(y)} graphs"
