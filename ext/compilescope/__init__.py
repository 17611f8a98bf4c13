"""compilescope: see what torch.compile did to your code, stage by stage."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from .model.capture import Capture, Skipped, draw_with
from .model.compile import Compile
from .model.compile_id import CompileId
from .model.findings.parts import Finding, Fix, Setting
from .model.graph import Graph
from .model.kernel import Kernel
from .model.partition import BudgetSweep, Partition, RepartitionUnavailable
from .model.serialize import FormatError
from .trace.reader import TraceError, load_trace

__version__ = "0.1.0"


def to_html(
    capture: Capture, path: str | os.PathLike[str] | None = None, before: Capture | None = None
) -> str:
    """One standalone, offline HTML report of `capture` (the interactive view inlined, a
    script-free version beside it), as `DataFrame.to_html` does: written to `path` (returns
    the path), or returned as a string without one. With `before`, the report also holds the
    diff from that capture to this one. `cap.to_html(path)` does the same."""
    capture = _as_capture(capture, "to_html", "capture")
    if before is not None:
        before = _as_capture(before, "to_html", "before")
    if path is None:
        from .views.offline.report import report_html

        return report_html(capture, before=before, found=findings(capture))
    from .views.offline.report import to_html as write

    return write(capture, os.fspath(path), before, findings(capture))


def _view(capture: Capture, before: Capture | None = None) -> object:
    """The view %%compile_fx shows under a cell: the widget, its script-free HTML inside."""
    from .magic import trier
    from .views.result_view import result_view

    found = findings(capture)
    return result_view(capture, before, found, on_try=trier(capture, found))


class _Drawing:
    """How a Capture draws itself (`cap.to_html`, its rich display): with the views."""

    def report(
        self, capture: Capture, path: str | os.PathLike[str] | None, before: Capture | None
    ) -> str:
        return to_html(capture, path, before)

    def bundle(self, capture: Capture, include: Any, exclude: Any) -> Any:
        try:
            from IPython import get_ipython
        except ImportError:  # IPython is optional (the `notebook` extra)
            return None
        shell = get_ipython()
        # A terminal IPython shows text only (its active types): no widget built for nothing.
        if shell is None or "text/html" not in shell.display_formatter.active_types:
            return None
        view = _view(capture)
        if hasattr(view, "_repr_mimebundle_"):  # the widget, its script-free HTML inside
            return view._repr_mimebundle_(include=include, exclude=exclude)
        assert hasattr(view, "_repr_html_")  # no anywidget: the views' script-free HTML
        return {"text/html": view._repr_html_(), "text/plain": repr(view)}


draw_with(_Drawing())


def _register_html_formatters() -> None:
    """In IPython, a RankReport shows as the views' HTML: registered with IPython's formatter
    (the model's classes know nothing of HTML; one direction of flow)."""
    import sys

    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return
    from .model.ranks.report import RankReport
    from .views.offline.ranks_html import ranks_html

    shell.display_formatter.formatters["text/html"].for_type(RankReport, ranks_html)
    from .model.findings.fix_trial import FixTrial
    from .model.findings.parts import Finding
    from .model.findings.ranked import Findings
    from .views.findings_view import findings_html, fix_trial_html

    html = shell.display_formatter.formatters["text/html"]
    html.for_type(FixTrial, fix_trial_html)
    html.for_type(Findings, findings_html)  # compilescope.findings(cap) in a notebook
    html.for_type(Finding, lambda f: findings_html((f,)))


_register_html_formatters()

if TYPE_CHECKING:
    import contextlib

    from IPython.core.interactiveshell import InteractiveShell

    from .live.pipeline import CaptureHandle, capture, capturing
    from .model.diff import CaptureDiff
    from .model.findings.fix_trial import FixTrial
    from .model.findings.ranked import Findings
    from .model.measured.speedup import StepSpeedup
    from .model.ranks.report import RankReport
    from .trace.rank_files import compare_saved_ranks, merge_ranks, write_rank
    from .views import tables
    from .views.charts import figures

# Names loaded on first use: the live capture imports torch (keep `import compilescope` light
# for log readers); tables and figures are the view's tables as rows and its charts as Figures;
# the rest is what `compilescope report LOG` does not use (it starts in a fresh process each time;
# the rank report's modules are a tenth of its imports, issue 34).
_LAZY = {
    "capture": ".live.pipeline",
    "capturing": ".live.pipeline",
    "CaptureHandle": ".live.pipeline",
    "tables": ".views.tables",
    "figures": ".views.charts.figures",
    "CaptureDiff": ".model.diff",
    "RankReport": ".model.ranks.report",
    "FixTrial": ".model.findings.fix_trial",
    "StepSpeedup": ".model.measured.speedup",
    "compare_saved_ranks": ".trace.rank_files",
    "merge_ranks": ".trace.rank_files",
    "write_rank": ".trace.rank_files",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'compilescope' has no attribute {name!r}")
    from importlib import import_module

    module = import_module(_LAZY[name], __name__)
    return module if module.__name__.endswith(f".{name}") else getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "BudgetSweep",
    "Capture",
    "CaptureDiff",
    "CaptureHandle",
    "Compile",
    "CompileId",
    "Finding",
    "Fix",
    "FixTrial",
    "FormatError",
    "Graph",
    "Kernel",
    "Partition",
    "RankReport",
    "RepartitionUnavailable",
    "Setting",
    "Skipped",
    "StepSpeedup",
    "TraceError",
    "applying",
    "capture",
    "capturing",
    "compare_ranks",
    "compare_saved_ranks",
    "diff",
    "explore",
    "figures",
    "findings",
    "kernel_table",
    "last",
    "load_trace",
    "merge_ranks",
    "show",
    "tables",
    "to_html",
    "try_fix",
    "write_rank",
]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """`%load_ext compilescope`: registers the %%compile_fx magic."""
    from .magic import load_ipython_extension as load

    load(ipython)
    _register_html_formatters()


def last() -> Capture | None:
    """The capture of the most recent %%compile_fx cell (None before the first)."""
    from .magic import last as _last

    return _last()


def show(capture: Capture, before: Capture | None = None) -> None:
    """Display a capture in the notebook: the view %%compile_fx shows (with a diff if `before`).
    Outside IPython (a plain script), prints the text summary and the diff instead."""
    capture = _as_capture(capture, "show", "capture")
    if before is not None:
        before = _as_capture(before, "show", "before")
    try:
        from IPython.display import display
    except ImportError:  # IPython is optional (the `notebook` extra): a script still sees it
        print(capture.summary())
        if before is not None:
            print(diff(before, capture).summary())
        return

    # a capture of several ranks: its rank report inside; IPython's display is unannotated
    display(_view(capture, before))  # type: ignore[no-untyped-call]


def explore(graph: object, title: str = "") -> object:
    """The graph explorer for a capture's Graph, a torch.fx.GraphModule or an ExportedProgram.

    Returns the widget (the notebook displays it when it is a cell's last expression).
    """
    from .model.graph import Graph
    from .views.result_view import explorer_view

    if not isinstance(graph, Graph):
        from .live.compiled_code.fx_graphs import graph_from_torch

        graph = graph_from_torch(graph)
    return explorer_view(graph, title=title or graph.kind)


def _as_capture(value: object, caller: str, argument: str) -> Capture:
    """A Capture, or what `capturing()` yielded (its `.capture`); anything else is a TypeError."""
    if isinstance(value, Capture):
        return value
    if type(value).__name__ == "CaptureHandle":  # not imported: that module imports torch
        return cast("CaptureHandle", value).capture
    raise TypeError(
        f"{caller}() takes a compilescope.Capture for {argument!r}"
        f" (from capture(), capturing(), load_trace() or %%compile_fx --out),"
        f" not {type(value).__name__}"
    )


def compare_ranks(capture: Capture, world_size: int | None = None) -> RankReport:
    """The ranks of a distributed job grouped by what they compiled, and where each group
    parts from the others (`python -m compilescope ranks LOGDIR` prints the same)."""
    return _as_capture(capture, "compare_ranks", "capture").compare_ranks(world_size)


def kernel_table(capture: Capture) -> Any:  # a pandas DataFrame, or the rows without pandas
    """Where the time goes: timed kernels ranked by time per step, with module, source line,
    share of the step, bandwidth and FLOP/s against measured peaks (a pandas DataFrame when
    pandas is installed, else a list of dicts; see compilescope.model.measured.kernel_table)."""
    from .model.measured.kernel_table import kernel_table as _table

    return _table(_as_capture(capture, "kernel_table", "capture"))


def diff(before: Capture, after: Capture) -> CaptureDiff:
    """What changed between two captures (or two ranks: diff(cap.rank(0), cap.rank(1)))."""
    from .model.diff import diff as _diff

    return _diff(_as_capture(before, "diff", "before"), _as_capture(after, "diff", "after"))


def findings(capture: Capture) -> Findings:
    """What to change, costliest first: graph breaks by cause, recompiles by failed guard,
    frames left to eager, data-dependent ops, ATen fallbacks, hot kernels, activation memory,
    compile-time hot spots; each with where (your own line), how often, what it costs and the
    fix. torch's graph-break registry fills in what its messages leave out."""
    from .model.findings.ranked import findings as _findings
    from .trace.graph_break_registry import load

    return _findings(_as_capture(capture, "findings", "capture"), load())


def try_fix(
    capture: Capture, finding: Finding | int, fix: Fix | None = None, *, baseline: bool = True
) -> FixTrial:
    """Capture the same code again with a finding's fix applied (settings restored after) and
    return both side by side (a FixTrial: `print(trial)`, `trial.rows()`). `finding` is a
    Finding or its number in `findings(capture)` (1 = first). Works for captures of
    `capture()` and `%%compile_fx`; see `compilescope.live.trials.fixes.try_fix`."""
    from .live.trials.fixes import try_fix as _try_fix

    capture = _as_capture(capture, "try_fix", "capture")
    if isinstance(finding, int):
        found = findings(capture)
        if not 1 <= finding <= len(found):
            raise IndexError(
                f"finding {finding}: this capture has {len(found)} findings (1-{len(found)})"
            )
        finding = found[finding - 1]
    return _try_fix(capture, finding, fix, baseline=baseline)


def applying(fix: Fix) -> contextlib.AbstractContextManager[None]:
    """Hold a fix's config settings inside a `with` block (then restore them): to try a fix on
    code compilescope cannot run again, e.g. `with applying(f.fix), capturing() as cap: ...`."""
    from .live.trials.fixes import applying as _applying

    return _applying(fix)
