"""The `%%compile_fx` cell magic: compile the cell with torch.compile and show what happened."""

from __future__ import annotations

import argparse
import ast
import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from IPython.core import magic as _magic
from IPython.core import magic_arguments as _arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, magics_class

from .cell import FUNCTION_NAME, UNSET_NAME, CellError, build_cell_function
from .model.capture import Capture

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .live.options import CompileOptions
    from .live.pipeline import CaptureRun, Replay
    from .model.findings.parts import Finding, Fix

_F = TypeVar("_F", bound=Callable[..., object])
# What the cell's function returns (cell.py): the values of the names it binds, and the value
# of its last expression.
_CellResult = tuple[dict[str, object], object]


# IPython's magic_arguments and display functions are unannotated: typed here as IPython
# documents them (each decorator returns the function it was given, with its arguments noted).
def magic_arguments() -> Callable[[_F], _F]:
    return cast(Callable[[_F], _F], _arguments.magic_arguments())  # type: ignore[no-untyped-call]


def argument(*names: str, **options: object) -> Callable[[_F], _F]:
    return cast(Callable[[_F], _F], _arguments.argument(*names, **options))  # type: ignore[no-untyped-call]


def line_cell_magic(method: _F) -> _F:
    # IPython's type says it may return a decorator (its `@line_cell_magic("name")` form).
    return cast(_F, _magic.line_cell_magic(method))


def parse_argstring(magic: Callable[..., object], line: str) -> argparse.Namespace:
    return cast(argparse.Namespace, _arguments.parse_argstring(magic, line))  # type: ignore[no-untyped-call]


def _display(view: object) -> None:
    from IPython.display import display

    display(view)  # type: ignore[no-untyped-call]  # unannotated in IPython


class _Handle(Protocol):
    """IPython's DisplayHandle: an output that can be redrawn in place."""

    def update(self, obj: object) -> None: ...


_last: Capture | None = None


def last() -> Capture | None:
    """The capture of the most recent `%%compile_fx` cell (None before the first)."""
    return _last


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--options takes KEY=VALUE, got {text!r}")
    try:
        parsed = ast.literal_eval(value.strip())  # a literal, never code
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return key.strip(), parsed


class _Progress:
    """One line under the cell that says which stage is compiling and for how long."""

    def __init__(self, quiet: bool, live_front_end: bool) -> None:
        self.start = time.perf_counter()
        # Only a front end that redraws outputs (a kernel's) gets the running line.
        self.handle = _display_handle() if live_front_end and not quiet else None
        self.shown = 0.0

    def on_event(self, name: str, metadata: dict[str, Any]) -> None:
        if self.handle is None or name in ("str", "chromium_event") or name.startswith("describe_"):
            return
        now = time.perf_counter()
        if now - self.shown < 0.25:  # a few updates a second is enough for a person
            return
        self.shown = now
        cid = metadata.get("frame_id"), metadata.get("frame_compile_id")
        where = f"{cid[0]}/{cid[1]}" if cid[0] is not None else ""
        self.handle.update(_Text(f"compile_fx: {where} {name} ... {now - self.start:.1f} s"))

    def finish(self, view: object | None) -> None:
        if self.handle is not None:
            self.handle.update(view if view is not None else _Text(""))
        elif view is not None:
            _display(view)


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _display_handle() -> _Handle:
    from IPython.display import display

    # IPython's display is unannotated; with a display_id it returns a DisplayHandle.
    handle: _Handle = display(_Text("compile_fx: starting ..."), display_id=True)  # type: ignore[no-untyped-call]
    return handle


@magics_class
class CompileFxMagics(Magics):
    shell: InteractiveShell  # Magics allows None; IPython sets it when it registers these

    @magic_arguments()
    @argument("--backend", choices=["inductor", "aot_eager", "eager"], default="inductor",
              help="how far down the pipeline: inductor (kernels), aot_eager (graphs, no codegen), eager (Dynamo only)")  # fmt: skip
    @argument("--mode", choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
              help="torch.compile's mode (inductor only)")  # fmt: skip
    @argument(
        "--dynamic", dest="dynamic", action="store_true", default=None, help="dynamic shapes on"
    )
    @argument("--no-dynamic", dest="dynamic", action="store_false", help="dynamic shapes off")
    @argument("--fullgraph", action="store_true", help="fail on a graph break instead of splitting")
    @argument("--backward", action="store_true",
              help="run backward of the last expression's sum when it requires grad")  # fmt: skip
    @argument(
        "--compiled-autograd",
        action="store_true",
        help="capture the backward with compiled autograd",
    )
    @argument("--options", action="append", default=[], metavar="KEY=VALUE",
              help="an Inductor config value (repeatable), e.g. --options max_autotune=True")  # fmt: skip
    @argument("--partitioner", choices=["min_cut", "default"],
              help="AOTAutograd's partitioner: min_cut (rematerializing) or default")  # fmt: skip
    @argument("--fresh", action="store_true",
              help="reset Dynamo first (drops every compiled function of this session)")  # fmt: skip
    @argument("--out", metavar="NAME", help="store the capture in this variable")
    @argument("--diff", metavar="NAME", help="compare with the capture stored in this variable")
    @argument("--time", dest="time", action="store_true", default=True,
              help="after the run, time each compiled graph alone (forward and backward, eager vs compiled) and its kernels (the default)")  # fmt: skip
    @argument("--no-time", dest="time", action="store_false",
              help="do not time the compiled graphs")  # fmt: skip
    @argument("--real-steps", type=int, default=10, metavar="N",
              help="in a cell that runs several optimizer steps, time N of its own steps once compiling stops, then a few eagerly (0: off)")  # fmt: skip
    @argument("--fix", metavar="N", type=int,
              help="apply the fix of finding N of the last capture (its Overview numbers them) while capturing this cell, then restore every setting; shows before and after")  # fmt: skip
    @argument("--quiet", action="store_true", help="show nothing; keep the capture")
    @argument("target", nargs="*", help="line form: a function or module, then its arguments")
    @line_cell_magic
    def compile_fx(self, line: str, cell: str | None = None) -> object:
        """Compile the cell with torch.compile and show Dynamo, AOTAutograd and Inductor's work.

        The cell runs once, as one function; the names it assigns are written back as if it ran
        normally, and its last expression is its result. `compilescope.last()` gives the capture.
        Line form: `%compile_fx [options] fn arg ...` captures `fn(arg, ...)`.
        """
        __tracebackhide__ = True  # noqa: F841  (IPython hides this frame in tracebacks)
        args = parse_argstring(self.compile_fx, line)
        options = dict(_option(o) for o in args.options)
        if args.backend != "inductor" and (args.mode or options):
            raise UsageError("--mode and --options apply only to --backend inductor")
        if args.partitioner and args.backend == "eager":
            raise UsageError("--partitioner needs --backend inductor or aot_eager")
        before: Capture | None = None
        if args.diff:
            before = self.shell.user_ns.get(args.diff)
            if not isinstance(before, Capture):
                raise UsageError(
                    f"--diff {args.diff}: no capture is stored under that name (use --out)"
                )
        fixing = None
        if args.fix is not None:
            fixing = self._fixing(args.fix)
            before = before if before is not None else _last
        args.fixing = fixing
        if cell is None:
            if not args.target:
                raise UsageError("%compile_fx needs a function to call: %compile_fx fn arg ...")
            return self._run_line(args, options, before)
        if args.target:
            raise UsageError(f"unexpected arguments for %%compile_fx: {' '.join(args.target)}")
        return self._run_cell(args, options, before, line, cell)

    # --- the two forms -----------------------------------------------------------------------
    def _run_cell(
        self,
        args: argparse.Namespace,
        options: dict[str, object],
        before: Capture | None,
        line: str,
        cell: str,
    ) -> object:
        __tracebackhide__ = True  # noqa: F841
        shell = self.shell
        # Register the whole cell, magic line included, under this cell's number, so that
        # tracebacks, graph breaks and kernels name the cell and the lines the user sees.
        # IPython has already counted this cell (interactiveshell.run_cell_async increments
        # before running), so its number is one less, as IPython's displaypub.py assumes too.
        # What tracebacks show for this file: the cell as the function it runs as (the magic line
        # becomes the `def` line), so IPython's renderer (stack_data), which looks the running
        # function up in the source, finds it and shows the right lines.
        body = "".join(f"    {text}" if text.strip() else text for text in cell.splitlines(True))
        whole = f"def {FUNCTION_NAME}():  # %%compile_fx {line}\n{body or '    pass'}"
        # ipykernel names the file by a hash of `raw_code`: give ours its own name, so IPython's
        # entry for the raw cell (its transformed one-liner) and ours do not overwrite each other.
        number = max(shell.execution_count - 1, 0)
        filename = shell.compile.cache(whole, number, raw_code=f"{whole}\n# compile_fx body")
        try:
            built = build_cell_function(cell, set(shell.user_ns), filename, first_line=2)
        except CellError as error:
            raise UsageError(str(error)) from None
        code = compile(built.module, filename, "exec")
        namespace = shell.user_ns
        namespace[UNSET_NAME] = _UNSET
        scratch: dict[str, Any] = {}
        exec(code, namespace, scratch)  # defines the function; runs none of the cell yet
        function = scratch[FUNCTION_NAME]
        params = [namespace[n] for n in built.parameters]
        bound, result = cast(_CellResult, self._capture(args, options, function, params, before))
        namespace.update({k: v for k, v in bound.items() if v is not _UNSET})
        return result if built.has_result else None

    def _run_line(
        self, args: argparse.Namespace, options: dict[str, object], before: Capture | None
    ) -> object:
        __tracebackhide__ = True  # noqa: F841
        ev: Callable[[str], object] = self.shell.ev  # unannotated in IPython
        fn, *call_args = (ev(expr) for expr in args.target)
        if not callable(fn):
            raise UsageError(f"{args.target[0]} is not callable")
        return self._capture(args, options, fn, call_args, before)

    def _fixing(self, number: int) -> tuple[Finding, Fix]:
        """The finding `number` of the last capture and its fix, checked before anything runs."""
        from .model.findings.ranked import findings
        from .trace.graph_break_registry import load

        if _last is None:
            raise UsageError("--fix N: no capture yet; run a %%compile_fx cell first")
        found = findings(_last, load())
        if not 1 <= number <= len(found):
            raise UsageError(f"--fix {number}: the last capture has {len(found)} findings")
        finding = found[number - 1]
        fix = finding.fix
        if fix is None:
            raise UsageError(f"--fix {number}: this finding has no fix ({finding.what})")
        from .live.trials.fixes import check_setting

        try:
            check_setting(fix)
        except ValueError as error:
            raise UsageError(f"--fix {number}: {error}") from None
        return finding, fix

    # --- capture, write back, show -----------------------------------------------------------
    def _capture(
        self,
        args: argparse.Namespace,
        options: dict[str, object],
        fn: Callable[..., object],
        call_args: list[object],
        before: Capture | None,
    ) -> object:
        __tracebackhide__ = True  # noqa: F841
        global _last
        from .live import torch_bridge
        from .live.options import CompileOptions
        from .live.pipeline import Replay, arguments_by_name, capture_run, remember_replay

        how = CompileOptions(
            backend=args.backend,
            mode=None if args.mode in (None, "default") else args.mode,
            options=options or None,
            dynamic=args.dynamic,
            fullgraph=args.fullgraph,
            partitioner=args.partitioner,
            compiled_autograd=args.compiled_autograd,
            timings=args.time,
            real_steps=max(args.real_steps, 0),
            eager_steps=5 if args.real_steps > 0 else 0,
        )
        try:
            how.backend_fn()
            how.settings()
        except (ValueError, KeyError) as error:
            raise UsageError(str(error)) from None
        if args.fresh:
            torch_bridge.reset_dynamo()
        progress = _Progress(args.quiet, live_front_end=hasattr(self.shell, "kernel"))

        def step(run: CaptureRun) -> object:
            output = run.call(fn, call_args)
            is_cell = getattr(fn, "__name__", "") == FUNCTION_NAME
            result = cast(_CellResult, output)[1] if is_cell else output
            if args.backward and not run.backward(result):
                raise UsageError(
                    "--backward: the cell's last expression is not a tensor that requires grad"
                )
            return output

        fixing: tuple[Finding, Fix] | None = getattr(args, "fixing", None)
        replay = Replay(how, step, arguments_by_name(fn, call_args, None))
        output, run = None, None
        try:
            with contextlib.ExitStack() as held:
                if fixing is not None:  # the fix's settings, compile arguments and marks
                    how = _hold_fix(held, fixing[1], replay)
                with capture_run(how, on_event=progress.on_event) as run:
                    output = step(run)
        finally:
            captured = run.result if run is not None else None
            _last = captured
            if captured is not None and not captured.partial:  # try_fix runs the cell again
                remember_replay(captured, replay)
            if args.out and captured is not None:
                self.shell.user_ns[args.out] = captured
            # With --fix, the before/after table below says what changed: no text diff too.
            self._show(captured, progress, before, args.quiet, text_diff=fixing is None)
            if fixing is not None and captured is not None and before is not None:
                from .model.findings.fix_trial import FixTrial

                # "before" is the capture the finding came from, not a second one
                _display(FixTrial(fixing[0], fixing[1], before, captured, rerun_baseline=False))
        return output

    def _show(
        self,
        capture: Capture | None,
        progress: _Progress,
        before: Capture | None,
        quiet: bool,
        text_diff: bool = True,
    ) -> None:
        view: object = None
        if capture is not None and not quiet:
            try:
                from .live.trials.partition_lab import sweep_small_graphs
                from .views.result_view import result_view

                sweep_small_graphs(capture)

                from .model.findings.ranked import findings
                from .trace.graph_break_registry import load

                found = findings(capture, load())
                # built now: a bug of ours falls back here
                view = result_view(capture, before, found, on_try=trier(capture, found))
            except Exception as error:  # our bug must not hide the user's result
                print(
                    f"compilescope: could not render the view ({type(error).__name__}: {error}); text summary:"
                )
                view = _Text(capture.summary())
        progress.finish(view)
        if text_diff and before is not None and capture is not None:  # also in the Diff tab
            from .model.diff import diff

            _display(_Text(diff(before, capture).summary()))


def _hold_fix(held: contextlib.ExitStack, fix: Fix, replay: Replay) -> CompileOptions:
    """Enter live/trials/fixes.py's `holding` (the one way a fix is applied, as `try_fix` does) on
    `held`; returns the options to capture with. Only the fix's own setting up becomes a usage
    error, never the cell's errors."""
    from .live.trials.fixes import holding

    try:
        return held.enter_context(holding(fix, replay))
    except ValueError as error:  # a fix that cannot be applied here (a name not found)
        raise UsageError(f"--fix: {error}") from None


def trier(capture: Capture, found: tuple[Finding, ...]) -> Callable[[int], dict[str, Any]] | None:
    """What the view's "try this fix" button calls: try finding N's fix on `capture` (run again
    with the fix; settings restored), as the view's data. None when the capture cannot be
    run again (a log, `capturing()`)."""
    if "compilescope.live.pipeline" not in sys.modules:  # nothing captured live: spare torch
        return None
    from .live.pipeline import replay_of

    if replay_of(capture) is None:
        return None

    def try_number(number: int) -> dict[str, Any]:
        from .live.trials.fixes import try_fix
        from .views.findings_view import fix_trial_data

        return fix_trial_data(try_fix(capture, found[number - 1]))

    return try_number


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


def load_ipython_extension(ipython: InteractiveShell) -> None:
    ipython.register_magics(CompileFxMagics)
