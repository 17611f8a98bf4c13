"""Compare the ranks of a distributed job: group those that agree, find where the others part."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from .compile_id import CompileId
from .ranks import ASPECTS, RankCompile, aspect_key, rank_compile, without_device_index

if TYPE_CHECKING:
    from .capture import Capture

_ASPECT_LABEL = dict(ASPECTS)


def ranks_text(ranks: tuple[int, ...] | list[int]) -> str:
    """`rank 1`, `ranks 0, 2, 3`, `ranks 0-7, 9`: consecutive runs of three or more as ranges."""
    ranks = sorted(ranks)
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    parts, start = [], 0
    for i in range(1, len(ranks) + 1):
        if i == len(ranks) or ranks[i] != ranks[i - 1] + 1:
            run = ranks[start:i]
            parts += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(r) for r in run]
            start = i
    return "ranks " + ", ".join(parts)


@dataclass(frozen=True)
class Divergence:
    """The first point where a group of ranks parts from the reference group."""

    ranks: tuple[int, ...]  # the group that parts
    reference: tuple[int, ...]  # the group it is compared with (the largest)
    aspect: str  # one of ASPECTS' names: compile ids, graph breaks, inputs, graphs, ...
    compile_id: str  # where (without the rank): `0/1`
    detail: str  # what differs, in words

    def __str__(self) -> str:
        return (
            f"{ranks_text(self.ranks)} parts from {ranks_text(self.reference)} at compile "
            f"{self.compile_id} ({_ASPECT_LABEL.get(self.aspect, self.aspect)}): {self.detail}"
        )


@dataclass(frozen=True)
class RankReport:
    """Ranks grouped by what they compiled; `diverged` when there is more than one group."""

    ranks: tuple[int, ...]
    profiles: dict[int, tuple[RankCompile, ...]]
    groups: tuple[tuple[int, ...], ...]  # ranks that agree on everything, largest group first
    aspect_groups: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    divergences: tuple[Divergence, ...] = ()
    source: str = ""
    world_size: int | None = None

    @property
    def diverged(self) -> bool:
        return len(self.groups) > 1 or bool(self.missing_ranks)

    @property
    def missing_ranks(self) -> tuple[int, ...]:
        """Ranks the world size promises that logged nothing."""
        if self.world_size is None:
            return ()
        return tuple(r for r in range(self.world_size) if r not in self.ranks)

    def summary(self) -> str:
        head = f"compilescope ranks: {len(self.ranks)} ranks"
        if self.ranks:
            head += f" ({ranks_text(self.ranks).split(' ', 1)[1]})"
        if self.source and self.source != "live":
            head += f" from {self.source}"
        lines = [head]
        if len(self.ranks) < 2:
            lines.append("nothing to compare: this capture holds fewer than two ranks")
            return "\n".join(lines)
        if self.missing_ranks:
            lines.append(f"MISSING: {ranks_text(self.missing_ranks)} of {self.world_size}")
        if len(self.groups) == 1:
            lines.append("all ranks agree: same compile ids, graph breaks, inputs, graphs,")
            lines.append("collectives and cache hits and misses")
        else:
            lines.append(f"DIVERGED: the ranks fall into {len(self.groups)} groups")
        for group in self.groups:
            lines.append(f"  {ranks_text(group):<14} {profile_line(self.profiles[group[0]])}")
        schedule = collective_lines(self.profiles[self.groups[0][0]]) if self.groups else []
        if schedule:
            lines.append(f"collectives of {ranks_text(self.groups[0])}, in graph order:")
            lines += [f"  {line}" for line in schedule]
        lines.append("by aspect:")
        for aspect, label in ASPECTS:
            groups = self.aspect_groups.get(aspect, ())
            text = "all agree" if len(groups) <= 1 else " | ".join(ranks_text(g) for g in groups)
            lines.append(f"  {label:<28} {text}")
        if self.divergences:
            lines.append("where they part:")
            lines += [f"  {d}" for d in self.divergences]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: groups, per-aspect groups and where each group parts."""
        return {
            "ranks": list(self.ranks),
            "world_size": self.world_size,
            "diverged": self.diverged,
            "groups": [list(g) for g in self.groups],
            "aspects": {a: [list(g) for g in gs] for a, gs in self.aspect_groups.items()},
            "divergences": [
                {
                    "ranks": list(d.ranks),
                    "reference": list(d.reference),
                    "aspect": d.aspect,
                    "compile_id": d.compile_id,
                    "detail": d.detail,
                }
                for d in self.divergences
            ],
            "profiles": {
                str(r): [
                    {
                        "compile_id": c.compile_id,
                        "frame": c.frame,
                        "status": c.status,
                        "recompile_reasons": list(c.recompile_reasons),
                        "graph_breaks": list(c.graph_breaks),
                        "collectives": [str(x) for x in c.collectives],
                        "cache": list(c.cache),
                        "inputs": list(c.inputs),
                        "graphs": [list(h) for h in c.graph_hashes],
                    }
                    for c in p
                ]
                for r, p in self.profiles.items()
            },
        }


def collective_lines(compiles: tuple[RankCompile, ...], limit: int = 8) -> list[str]:
    """One line per compile that has collectives: `0/0 (aot_forward_graph): all_reduce(...)`."""
    lines = []
    for c in compiles:
        if c.collectives:
            shown = ", ".join(str(x) for x in c.collectives[:limit])
            more = f", ... {len(c.collectives) - limit} more" if len(c.collectives) > limit else ""
            lines.append(f"{c.compile_id} ({c.collectives[0].graph}): {shown}{more}")
    return lines


def profile_line(compiles: tuple[RankCompile, ...]) -> str:
    ids = ", ".join(c.compile_id for c in compiles) or "none"
    recompiles = sum(c.is_recompile for c in compiles)
    breaks = sum(len(c.graph_breaks) for c in compiles)
    collectives = sum(len(c.collectives) for c in compiles)
    counts = ((recompiles, "recompile"), (breaks, "graph break"), (collectives, "collective"))
    return f"compile ids {ids}; " + ", ".join(f"{n} {w}{'' if n == 1 else 's'}" for n, w in counts)


def compare_ranks(capture: Capture, world_size: int | None = None) -> RankReport:
    """Group the ranks of a multi-rank capture and find where each group parts from the rest."""
    ranks = tuple(sorted(capture.ranks))
    profiles = {r: tuple(rank_compile(c) for c in capture.rank(r)) for r in ranks}
    groups = _group(ranks, lambda r: tuple(aspect_key(profiles[r], a) for a, _ in ASPECTS))
    common = _common_ids(profiles)
    # Aspects other than compile ids are compared on the compiles every rank has: an extra
    # compile on one rank is a difference of compile ids, and reported there.
    shared = {r: tuple(c for c in profiles[r] if c.compile_id in common) for r in ranks}
    aspect_groups = {
        aspect: _group(
            ranks,
            partial(aspect_key_of, profiles if aspect == "compile ids" else shared, aspect),
        )
        for aspect, _ in ASPECTS
    }
    divergences = []
    if groups:
        reference = groups[0]
        for group in groups[1:]:
            divergences.append(_first_parting(capture, profiles, group, reference))
    return RankReport(
        ranks=ranks,
        profiles=profiles,
        groups=groups,
        aspect_groups=aspect_groups,
        divergences=tuple(d for d in divergences if d is not None),
        source=capture.source,
        world_size=world_size if world_size is not None else capture.world_size,
    )


def aspect_key_of(
    profiles: dict[int, tuple[RankCompile, ...]], aspect: str, rank: int
) -> tuple[object, ...]:
    return aspect_key(profiles[rank], aspect)


def _group(ranks: tuple[int, ...], key: Callable[[int], Hashable]) -> tuple[tuple[int, ...], ...]:
    """Ranks with equal keys, largest group first (ties: the group with the lowest rank)."""
    by_key: dict[Hashable, list[int]] = {}
    for r in ranks:
        by_key.setdefault(key(r), []).append(r)
    return tuple(sorted((tuple(g) for g in by_key.values()), key=lambda g: (-len(g), g[0])))


def _common_ids(profiles: dict[int, tuple[RankCompile, ...]]) -> set[str]:
    sets = [{c.compile_id for c in p} for p in profiles.values()]
    return set.intersection(*sets) if sets else set()


def _merged_order(mine: list[str], theirs: list[str]) -> list[str]:
    """Both ranks' compile ids in log order: the reference's, with the group's own inserted
    after the compile that preceded them."""
    order = list(theirs)
    previous: str | None = None
    for cid in mine:
        if cid not in order:
            after = order.index(previous) + 1 if previous is not None and previous in order else 0
            order.insert(after, cid)
        previous = cid
    return order


def _first_parting(
    capture: Capture,
    profiles: dict[int, tuple[RankCompile, ...]],
    group: tuple[int, ...],
    reference: tuple[int, ...],
) -> Divergence | None:
    mine = {c.compile_id: c for c in profiles[group[0]]}
    theirs = {c.compile_id: c for c in profiles[reference[0]]}
    who, others = ranks_text(group), ranks_text(reference)

    def part(aspect: str, cid: str, detail: str) -> Divergence:
        return Divergence(group, reference, aspect, cid, detail)

    for cid in _merged_order(list(mine), list(theirs)):
        a, b = mine.get(cid), theirs.get(cid)
        if b is None:
            assert a is not None  # cid is one of mine or theirs
            why = f" (recompile: {a.recompile_reasons[0]})" if a.recompile_reasons else ""
            return part(
                "compile ids",
                cid,
                f"{who} {_verb(group, 'compile')} {cid}{why}; {others} {_verb(reference, 'do')} not",
            )
        if a is None:
            why = f" (recompile: {b.recompile_reasons[0]})" if b.recompile_reasons else ""
            return part(
                "compile ids",
                cid,
                f"{others} {_verb(reference, 'compile')} {cid}{why}; {who} {_verb(group, 'do')} not",
            )
        if (a.status, a.recompile_reasons) != (b.status, b.recompile_reasons):
            detail = f"{who}: {a.status} {list(a.recompile_reasons)}; "
            detail += f"{others}: {b.status} {list(b.recompile_reasons)}"
            return part("compile ids", cid, detail)
        for aspect, field_name in (
            ("graph breaks", "graph_breaks"),
            ("inputs", "inputs"),
            ("graphs", "graph_hashes"),
            ("collectives", "collectives"),
            ("cache", "cache"),
        ):
            x, y = getattr(a, field_name), getattr(b, field_name)
            if x != y:
                if aspect == "graphs":
                    detail = _graph_detail(capture, group[0], reference[0], cid, x, y)
                else:
                    detail = _sequence_detail(x, y)
                return part(aspect, cid, f"{who} vs {others}: {detail}")
    return None


def _verb(ranks: tuple[int, ...], verb: str) -> str:
    """`rank 1 compiles`, `ranks 0, 2 compile`."""
    if len(ranks) > 1:
        return verb
    return verb + ("es" if verb.endswith("o") else "s")


def _sequence_detail(x: tuple[object, ...], y: tuple[object, ...]) -> str:
    for i, (p, q) in enumerate(zip(x, y, strict=False)):
        if p != q:
            return f"#{i + 1} is {p} vs {q}"
    if len(x) > len(y):
        return f"{len(x)} vs {len(y)}; first extra: {x[len(y)]}"
    return f"{len(x)} vs {len(y)}; first missing: {y[len(x)]}"


def _graph_detail(
    capture: Capture,
    rank_a: int,
    rank_b: int,
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
        ga = capture[CompileId(rank_a, *_fields(base))].graphs[kind]
        gb = capture[CompileId(rank_b, *_fields(base))].graphs[kind]
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


def _fields(cid: CompileId) -> tuple[int | None, int | None, int | None, int]:
    return (cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, cid.attempt)
