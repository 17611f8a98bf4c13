"""Compare the ranks of a distributed job: group those that agree, find where the others part,
and say which ranks' records are incomplete (those are compared only as far as they go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .compare import (
    ASPECT_LABEL,
    ASPECT_NAMES,
    CompileLookup,
    Parting,
    RankedCompiles,
    RankRecord,
    absent_record,
    after_last,
    first_parting,
    group_ranks,
    not_compared,
    records_of,
)
from .records import ASPECTS, RankCompile

# What `python -m compilescope ranks` exits with, by the report's status.
EXIT_CODES = {"agree": 0, "one rank": 0, "diverged": 1, "incomplete": 3}


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
            f"{self.compile_id} ({ASPECT_LABEL.get(self.aspect, self.aspect)}): {self.detail}"
        )


@dataclass(frozen=True)
class Gap:
    """A rank whose record is incomplete: why, where it ends, and what was not compared."""

    rank: int
    why: str  # in words: no log, an empty log, a log that ends early, lost entries
    where: str = ""  # where its record ends (`in compile 4/0, after its aot_forward_graph`)
    file: str = ""
    in_part: tuple[str, ...] = ()  # compile ids compared only as far as they were logged
    not_compared: tuple[str, ...] = ()  # the reference's compile ids past its end
    damaged: tuple[str, ...] = ()  # compile ids compared by their ids only (entries lost)
    reference: tuple[int, ...] = ()  # the rank whose compile ids `not_compared` are
    nothing: bool = False  # nothing of it could be compared at all

    def __str__(self) -> str:
        text = f"rank {self.rank}: {self.why}"
        if self.nothing:
            return text + "; nothing of it was compared"
        if self.where:
            text += f"; its record stops {self.where}"
        if self.file:
            text += f" ({self.file})"
        if self.in_part:
            text += f"; compared as far as logged: {', '.join(self.in_part)}"
        if self.damaged:
            text += f"; compared by id only (entries lost): {', '.join(self.damaged)}"
        if self.not_compared:
            shown = ", ".join(self.not_compared[:6])
            more = f" and {len(self.not_compared) - 6} more" if len(self.not_compared) > 6 else ""
            text += (
                f"; not compared: {shown}{more} ({ranks_text(self.reference)} compiled them "
                "after that point)"
            )
        return text


@dataclass(frozen=True)
class RankReport:
    """Ranks grouped by what they compiled (`diverged` when there is more than one group), and
    the ranks whose records are incomplete (`gaps`): compared only as far as they go."""

    ranks: tuple[int, ...]
    profiles: dict[int, tuple[RankCompile, ...]]
    groups: tuple[tuple[int, ...], ...]  # ranks that agree on everything, largest group first
    aspect_groups: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    divergences: tuple[Divergence, ...] = ()
    source: str = ""
    world_size: int | None = None
    gaps: tuple[Gap, ...] = ()

    @property
    def diverged(self) -> bool:
        """Ranks differ in what both records hold (never past where an incomplete one ends)."""
        return len(self.groups) > 1

    @property
    def incomplete(self) -> bool:
        return bool(self.gaps)

    @property
    def status(self) -> str:
        """`diverged`, `incomplete` (agree as far as the records go), `agree`, or `one rank`."""
        if self.diverged:
            return "diverged"
        if self.incomplete:
            return "incomplete"
        return "agree" if len(self.ranks) > 1 else "one rank"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def missing_ranks(self) -> tuple[int, ...]:
        """Ranks the world size promises that have no log or capture at all."""
        return tuple(g.rank for g in self.gaps if g.nothing and g.why.startswith("no log"))

    def summary(self) -> str:
        head = f"compilescope ranks: {len(self.ranks)} ranks"
        if self.ranks:
            head += f" ({ranks_text(self.ranks).split(' ', 1)[1]})"
        if self.source and self.source != "live":
            head += f" from {self.source}"
        lines = [head]
        if self.status == "one rank":
            lines.append("nothing to compare: this capture holds fewer than two ranks")
            return "\n".join(lines)
        lines.append(verdict(self))
        for group in self.groups:
            lines.append(f"  {ranks_text(group):<14} {profile_line(self.profiles[group[0]])}")
        schedule = collective_lines(self.profiles[self.groups[0][0]]) if self.groups else []
        if schedule:
            lines.append(f"collectives of {ranks_text(self.groups[0])}, in graph order:")
            lines += [f"  {line}" for line in schedule]
        if self.groups:
            lines.append("by aspect" + (" (as far as each record goes):" if self.gaps else ":"))
            for aspect, label in ASPECTS:
                lines.append(f"  {label:<28} {aspect_text(self.aspect_groups.get(aspect, ()))}")
        if self.divergences:
            lines.append("where they part:")
            lines += [f"  {d}" for d in self.divergences]
        if self.gaps:
            lines.append("incomplete records (never called a divergence past where they end):")
            lines += [f"  {g}" for g in self.gaps]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: status, groups, per-aspect groups, where each group parts, and gaps."""
        return {
            "ranks": list(self.ranks),
            "world_size": self.world_size,
            "status": self.status,
            "diverged": self.diverged,
            "incomplete": self.incomplete,
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
            "gaps": [
                {
                    "rank": g.rank,
                    "why": g.why,
                    "where": g.where,
                    "file": g.file,
                    "compared_as_far_as_logged": list(g.in_part),
                    "not_compared": list(g.not_compared),
                    "compared_by_id_only": list(g.damaged),
                    "nothing_compared": g.nothing,
                }
                for g in self.gaps
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


def verdict(report: RankReport) -> str:
    """The report's first line after its head: DIVERGED, INCOMPLETE or agree, in words."""
    gaps = ranks_text([g.rank for g in report.gaps]) if report.gaps else ""
    if report.diverged:
        also = f" ({gaps}: incomplete, see below)" if gaps else ""
        return f"DIVERGED: the ranks fall into {len(report.groups)} groups{also}"
    if report.gaps:
        if sum(len(g) for g in report.groups) < 2:
            return f"INCOMPLETE: {_records_of(report.gaps)} incomplete: no two records to compare"
        return (
            f"INCOMPLETE: {_records_of(report.gaps)} incomplete; the ranks agree as far as "
            "their records go (nothing past where a record ends is called a divergence)"
        )
    return (
        "all ranks agree: same compile ids, graph breaks, inputs, graphs,\n"
        "collectives and cache hits and misses"
    )


def _records_of(gaps: tuple[Gap, ...]) -> str:
    """`the record of rank 1 is`, `the records of ranks 1-3 are`."""
    ranks = ranks_text([g.rank for g in gaps])
    return f"the record of {ranks} is" if len(gaps) == 1 else f"the records of {ranks} are"


def aspect_text(groups: tuple[tuple[int, ...], ...]) -> str:
    return "all agree" if len(groups) <= 1 else " | ".join(ranks_text(g) for g in groups)


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


class RankedCapture(RankedCompiles, CompileLookup, Protocol):
    """What `compare_ranks` reads: a `Capture` (model/capture.py, above this module), its
    compiles by rank and by id, where it was read from and the job's size when known."""

    @property
    def source(self) -> str: ...
    @property
    def world_size(self) -> int | None: ...


def compare_ranks(capture: RankedCapture, world_size: int | None = None) -> RankReport:
    """Group the ranks of a multi-rank capture, find where each group parts from the rest, and
    say which records are incomplete (a log missing, empty, cut short or damaged)."""
    world_size = world_size if world_size is not None else capture.world_size
    return compare_records(records_of(capture, world_size), world_size, capture.source, capture)


def compare_records(
    records: dict[int, RankRecord],
    world_size: int | None,
    source: str,
    compiles: CompileLookup | None = None,
) -> RankReport:
    """`compare_ranks` from the ranks' records alone (each rank summarised where it was read,
    in parallel or in the job); `compiles` finds a compile's graphs, read only to name the first
    differing node where two groups' graphs differ. A rank below `world_size` without a record
    is missing."""
    records = dict(records)
    for rank in range(world_size or 0):
        records.setdefault(rank, absent_record(rank))
    records = dict(sorted(records.items()))
    capture = compiles
    compared = [r for r in records.values() if not r.nothing]
    groups = group_ranks(compared)
    aspect_groups = {aspect: group_ranks(compared, (aspect,)) for aspect in ASPECT_NAMES}
    reference = _representative(records, groups[0]) if groups else None
    divergences = []
    for group in groups[1:]:
        assert reference is not None
        mine = _representative(records, group)
        words = (ranks_text(group), ranks_text(groups[0]))
        part = first_parting(mine, reference, words=words, capture=capture)
        if part is not None:
            detail = part.detail + _cut_note(mine, reference) + _prefix_note(part, mine, reference)
            divergences.append(Divergence(group, groups[0], part.aspect, part.compile_id, detail))
    gaps = tuple(_gap(r, reference) for r in records.values() if not r.complete)
    return RankReport(
        ranks=tuple(records),
        profiles={r.rank: r.compiles for r in compared},
        groups=groups,
        aspect_groups=aspect_groups,
        divergences=tuple(divergences),
        source=source,
        world_size=world_size,
        gaps=gaps,
    )


def _representative(records: dict[int, RankRecord], group: tuple[int, ...]) -> RankRecord:
    """A group's first complete record (else its first): what the others are compared with."""
    return next((records[r] for r in group if records[r].complete), records[group[0]])


def _cut_note(mine: RankRecord, reference: RankRecord) -> str:
    cut = [r.rank for r in (mine, reference) if r.ends_early]
    return f" (compared as far as the record of {ranks_text(cut)} goes)" if cut else ""


def _prefix_note(part: Parting, mine: RankRecord, reference: RankRecord) -> str:
    """A record that lacks only compiles past its own last one: what a rank that stopped at a
    clean record boundary (crashed, or killed between two compiles) also looks like."""
    if part.aspect != "compile ids" or (part.compile_id in mine.ids) == (
        part.compile_id in reference.ids
    ):
        return ""
    have, lack = (mine, reference) if part.compile_id in mine.ids else (reference, mine)
    extra = next(c for c in have.compiles if c.compile_id == part.compile_id)
    if extra.is_recompile or not after_last(part.compile_id, have, lack) or not lack.ids:
        return ""  # a recompile is a difference of guards: what the report is for
    return (
        f"; rank {lack.rank}'s record ends after {lack.ids[-1]} and agrees up to there: a rank "
        "that stopped early (crashed, or killed between two compiles) looks the same in a log"
    )


def _gap(record: RankRecord, reference: RankRecord | None) -> Gap:
    files = ", ".join(log.file for log in record.logs if log.file)
    if record.nothing:
        return Gap(record.rank, record.nothing, file=files, nothing=True)
    why = f"its record ends early: {record.ends_early}" if record.ends_early else ""
    if record.damaged:
        lost = sum(s.count for log in record.logs for s in log.skipped)
        why += ("; " if why else "") + f"{lost} entries of its log could not be read"
    ended = [log for log in record.logs if log.ends_early]
    other = reference if reference is not None and reference.rank != record.rank else None
    return Gap(
        record.rank,
        why,
        where=ended[0].where_it_ends() if ended else "",
        file=ended[0].file if ended else files,
        in_part=tuple(c for c in record.ids if c in record.partial),
        not_compared=tuple(not_compared(record, other)) if other is not None else (),
        damaged=tuple(sorted(record.damaged)),
        reference=(other.rank,) if other is not None else (),
    )
