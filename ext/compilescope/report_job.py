"""The report of a big job as a folder: rank logs read in parallel processes, one page per
compile id written where its rank was read, and a script-free index from the ranks' records."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from .model.capture import Capture, RankLog, Skipped
from .model.compile import Compile
from .model.compile_id import CompileId
from .model.findings.parts import Finding
from .model.findings.ranked import findings
from .model.graph import Graph
from .model.ranks.compare import CompileLookup, RankRecord, records_of
from .model.ranks.report import RankReport, compare_records
from .trace.rank_files import (
    SavedRanks,
    compare_saved_ranks,
    merge_ranks_files,
    rank_files,
    rank_records,
    summary_files,
)
from .trace.reader import no_events, rank_of_log, read_logs, trace_files
from .trace.sources import is_saved_capture, open_capture
from .views.offline.report import report_parts
from .views.offline.report_index import (
    BUNDLE,
    PAGES,
    CompileRow,
    back_link,
    compile_row,
    findings_blocks,
    index_html,
    page_name,
)
from .views.static_files import static_text


@dataclass(frozen=True)
class RankPages:
    """What the index needs of one rank, from the process that read it and wrote its pages."""

    rank: int | None
    record: RankRecord | None
    rows: tuple[CompileRow, ...]
    findings: tuple[str, ...]  # one script-free block per finding
    logs: tuple[RankLog, ...]
    skipped: tuple[Skipped, ...]
    torch: str
    events: int = 0  # structured-trace events read (compiles, for a saved capture)


def write_pages(capture: Capture, folder: Path, taken: set[str]) -> RankPages:
    """Each compile id of `capture` (one rank) as its own page in `folder`/compiles, and what the
    index needs of it. The page is the interactive view of that compile alone."""
    known = {*capture.ranks, *(log.rank for log in capture.rank_logs)}
    rank = next(iter(known)) if len(known) == 1 else None
    rows = []
    for c in capture:
        page = page_name(str(c.id), taken)
        rows.append(compile_row(c, page, capture.cells))
        one = replace(capture, compiles=(c,), ranks=(), rank_logs=(), world_size=None)
        title = f"{c.id} {c.frame.function}"
        with (folder / page).open("w", encoding="utf-8") as out:
            parts = report_parts(one, title, script=f"../{BUNDLE}", head=back_link(title))
            for part in parts:
                out.write(part)
    record = records_of(capture)[rank] if rank is not None else None
    return RankPages(
        rank,
        record,
        tuple(rows),
        tuple(findings_blocks(tuple(map(_without_rank, findings(capture))))),
        capture.rank_logs,
        capture.skipped,
        capture.torch_version,
    )


def _without_rank(finding: Finding) -> Finding:
    """A finding with its compile ids written without the rank (`1/0`, not `rank3:1/0`): the
    same finding on every rank is then one block in the index, "on ranks 0-63"."""
    ids = []
    for cid in finding.compile_ids:
        try:
            ids.append(str(replace(CompileId.parse(cid), rank=None)))
        except ValueError:
            ids.append(cid)
    return replace(finding, compile_ids=tuple(ids))


# Graphs this process has read, by kind and text: ranks of one job log the same graphs, which
# are parsed once (bounded: a job of all-different graphs keeps no more than this many).
_PARSED: dict[tuple[str, str], Graph] = {}
_PARSED_MAX = 512


def _shared(graph: Graph) -> Graph:
    """`graph`, its nodes parsed once for every graph of the same kind and text."""
    key = (graph.kind, graph.text)
    seen = _PARSED.get(key)
    if seen is None:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = graph
        return graph
    return Graph(graph.kind, graph.text, load_nodes=lambda: seen.nodes, metadata=graph.metadata)


# A rank to read in a worker: its file, its rank, the job's path, the report's folder, and
# whether the file is a `write_rank` capture (else a TORCH_TRACE log).
_Task = tuple[str, int | None, str, str, bool]


def _read_rank(task: _Task) -> tuple[Capture, int]:
    """One rank's TORCH_TRACE log or `write_rank` capture as one rank of the whole job (keyed
    as `load_trace` or `merge_ranks` of the folder keys it), and the events it holds."""
    file, rank, source, _, saved = task
    if saved and rank is not None:
        capture = merge_ranks_files(Path(source), [(rank, Path(file))])
        return capture, max(1, len(capture.compiles))
    return read_logs([Path(file)], [rank], source)


def _log_record(task: _Task) -> tuple[dict[int, RankRecord], int]:
    """One rank's log (run in a worker process): its record and the events it holds."""
    capture, events = _read_rank(task)
    return records_of(capture), events


def _log_pages(task: _Task) -> RankPages:
    """One rank's log or saved capture (run in a worker process): read, its pages written, its
    record returned."""
    capture, events = _read_rank(task)
    folder = task[3]
    compiles = tuple(
        replace(c, graphs={k: tuple(map(_shared, gs)) for k, gs in c.graphs.items()})
        for c in capture.compiles
    )
    capture = replace(capture, compiles=compiles)
    # Page names are made of compile ids, which hold the rank: no two workers write one name.
    return replace(write_pages(capture, Path(folder), set()), events=events)


class _LogsByRank:
    """A compile of any rank, read from its log only when asked (the rank report names the
    first differing node of two groups' graphs); the last two logs read are kept."""

    def __init__(self, files: dict[int, str], source: str) -> None:
        self.files = files
        self.source = source
        self.read: dict[int, Capture] = {}

    def __getitem__(self, key: CompileId) -> Compile:
        rank = key.rank if key.rank is not None else 0
        if rank not in self.read:
            if len(self.read) >= 2:
                self.read.pop(next(iter(self.read)))
            self.read[rank] = read_logs([Path(self.files[rank])], [rank], self.source)[0]
        return self.read[rank][key]


def _workers(jobs: int | None, tasks: int) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(jobs or cores or 1, tasks))


_T = TypeVar("_T")
_R = TypeVar("_R")


def _in_parallel(work: Callable[[_T], _R], tasks: list[_T], jobs: int | None) -> Iterator[_R]:
    """`work` over `tasks` in order, in `jobs` processes (default: one a core)."""
    jobs = _workers(jobs, len(tasks))
    if jobs <= 1:
        yield from map(work, tasks)
        return
    import multiprocessing

    # Forked workers start with the modules imported; each holds one rank's capture at a time.
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=16) as pool:
        yield from pool.imap(work, tasks)


def _log_tasks(where: Path, out: Path | None = None) -> list[_Task]:
    logs = trace_files(where)
    folder = str(out or "")
    return [
        (str(f), rank_of_log(f, i, len(logs)), str(where), folder, False)
        for i, f in enumerate(logs)
    ]


def rank_report(
    source: str | os.PathLike[str], world_size: int | None = None, jobs: int | None = None
) -> RankReport:
    """The rank report of `source`, reading only what it needs: each rank log's record in
    parallel processes (a log read again only to name a differing node), or a `write_rank`
    folder's summaries; a single log or saved capture is read whole."""
    where = Path(source)
    if where.is_dir() and (rank_files(where) or summary_files(where)):
        return compare_saved_ranks(where, world_size)
    if not _is_logs(where) or len(tasks := _log_tasks(where)) < 2:
        return open_capture(where).compare_ranks(world_size)
    records: dict[int, RankRecord] = {}
    events = 0
    for found, seen in _in_parallel(_log_record, tasks, jobs):
        records |= found
        events += seen
    if events == 0:
        raise no_events(str(source))
    files = {t[1]: t[0] for t in tasks if t[1] is not None}
    return compare_records(records, world_size, str(source), _LogsByRank(files, str(source)))


def write_report_folder(
    source: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    world_size: int | None = None,
    jobs: int | None = None,
) -> tuple[Path, int, RankReport | None]:
    """Write the report of `source` as `folder`/index.html with a page per compile id beside it.
    TORCH_TRACE rank logs are read in `jobs` processes (default: one per core), one rank at a
    time each; a saved capture or a folder of `write_rank` files is read here. Returns the
    index's path, the number of compile ids and the rank report (None for one rank)."""
    out = Path(folder)
    (out / PAGES).mkdir(parents=True, exist_ok=True)
    (out / BUNDLE).write_text(static_text("dist/report.js"), encoding="utf-8")
    where = Path(source)
    lookup: CompileLookup
    if _is_logs(where):
        tasks = _log_tasks(where, out)
        pages = list(_in_parallel(_log_pages, tasks, jobs))
        if sum(p.events for p in pages) == 0:
            raise no_events(str(source), sum(s.count for p in pages for s in p.skipped))
        lookup = _LogsByRank({t[1]: t[0] for t in tasks if t[1] is not None}, str(source))
    elif where.is_dir() and (rank_files(where) or summary_files(where)):
        # Each rank's capture read in a worker, one at a time; the rank report from summaries.
        whole = [
            (str(p), r, str(where), str(out), True)
            for r, p in rank_files(where)
            if not p.name.endswith(".partial")
        ]
        pages = list(_in_parallel(_log_pages, whole, jobs))
        records, size = rank_records(where)
        pages = [replace(p, record=records.get(p.rank)) if p.rank is not None else p for p in pages]
        known = {p.rank for p in pages}
        pages += [_summary_only(r) for r in records.values() if r.rank not in known]
        lookup = SavedRanks(where)
        world_size = world_size if world_size is not None else size
    else:  # a saved capture
        capture = open_capture(where)
        taken: set[str] = set()
        ranks = capture.ranks if len(capture.ranks) > 1 else ()
        pages = [write_pages(capture.rank(r), out, taken) for r in ranks]
        pages = pages or [write_pages(capture, out, taken)]
        lookup = capture
        world_size = world_size if world_size is not None else capture.world_size
    records = {p.rank: p.record for p in pages if p.rank is not None and p.record is not None}
    report = None
    if len(records) > 1 or (world_size or 0) > 1:
        report = compare_records(records, world_size, str(source), lookup)
    _write_index(out, source, pages, report)
    return out / "index.html", sum(len(p.rows) for p in pages), report


def _is_logs(where: Path) -> bool:
    """TORCH_TRACE logs (read here in parallel), not a saved capture or `write_rank` files."""
    if where.is_dir():
        return not rank_files(where) and not summary_files(where)
    return not is_saved_capture(where)


def _summary_only(record: RankRecord) -> RankPages:
    """A rank that left only its summary (`write_rank(..., full=False)`): in the rank report,
    with no pages."""
    logs = record.logs
    return RankPages(record.rank, record, (), (), logs, (), "", len(record.compiles))


def _write_index(
    out: Path, source: str | os.PathLike[str], pages: list[RankPages], report: RankReport | None
) -> None:
    from .views.offline.ranks_html import ranks_html

    seen: dict[str, list[int | None]] = {}
    for p in pages:
        for block in p.findings:
            seen.setdefault(block, []).append(p.rank)
    rows = [row for p in pages for row in p.rows]
    torch = next((p.torch for p in pages if p.torch), "")
    head = f"{len(rows)} compile ids from {source}" + (f", torch {torch}" if torch else "")
    if report is not None:
        head += f"; ranks: {report.status}"
    notes = [f"skipped {s.count}: {s.reason}" for p in pages for s in p.skipped]
    title = f"compilescope report: {Path(source).name}"
    block = ranks_html(report) if report is not None else ""
    html = index_html(title, head, block, list(seen.items()), rows, notes[:20])
    (out / "index.html").write_text(html, encoding="utf-8")
