"""Most of what compilescope reads or sets inside torch (the rest: ARCHITECTURE.md's list), guarded for torch 2.11 to 2.14."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import re
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeGuard, TypeVar, cast

import torch

from . import repro_settings
from .torch_support import missing
from .torch_support import torch_version as torch_version  # the one definition, re-exported

_P = ParamSpec("_P")
_R = TypeVar("_R")
_F = TypeVar("_F", bound=Callable[..., object])

# What torch.compile calls a backend (torch/_dynamo/backends/registry.py, CompilerFn): a Dynamo
# graph and its example inputs (tensors, SymInts, constants) -> the callable that runs the graph.
CompiledFn = Callable[..., Any]  # returns what the graph returns: torch's own CompiledFn
Backend = Callable[[torch.fx.GraphModule, list[Any]], CompiledFn]

TRACE_LOGGER = "torch.__trace"  # torch/_logging/_internal.py: trace_log, what TORCH_TRACE writes

# Settings held for the duration of a capture, restored afterwards.
# - the FX-graph and AOTAutograd caches (local and remote) off: on a cache hit torch skips the
#   pre-grad and post-grad stages and logs no graphs for them; a capture must show every stage
#   every time. Not force_disable_caches: that also gives every compile_fx call a fresh Inductor
#   cache folder (torch/_inductor/compile_fx.py, with_fresh_cache_if_config), so kernels that
#   several graphs of one capture share were built again for each; `capture_settings` gives the
#   whole capture one fresh folder instead (new files, so Triton's IR is found by file times).
# - trace.provenance_tracking_level (torch >= 2.8; a bool `trace.provenance_tracking` before):
#   makes Inductor log kernel -> node -> source-line maps. Level 2 ("basic", torch/_inductor/
#   config.py) logs the kernel -> post-grad node and kernel -> stack-trace maps that we read,
#   as level 1 does (torch/_inductor/debug.py, set_kernel_post_grad_provenance_tracing runs
#   for any level but 0). Level 1 also records every node's origin chain through each pass
#   (fx/traceback.py NodeSource, only `== 1`) and make_fx stack traces: work that grows with
#   the graph, for maps we never read (RESULTS.md, the cost of listening).
# Not force_non_lazy_backward_lowering: lowering the backward with the forward (before the
# first backward, as torch does without it) made ConvNeXt's backward compile slower on an H100,
# with the same nodes and kernels (RESULTS.md, the cost of listening), and changes when torch
# compiles. The backward is lowered lazily, as without compilescope; live/compiled_code/lazy_backward.py
# gets its kernels their node maps.
_CAPTURE_SETTINGS = (
    ("torch._inductor.config", "fx_graph_cache", False),
    ("torch._inductor.config", "fx_graph_remote_cache", False),
    ("torch._functorch.config", "enable_autograd_cache", False),
    ("torch._functorch.config", "enable_remote_autograd_cache", False),
    ("torch._inductor.config", "trace.provenance_tracking_level", 2),
)


def default_device() -> str:
    """ "cuda" where the user's code has used a GPU, else "cpu"."""
    return "cuda" if torch.cuda.is_available() and cuda_initialized() else "cpu"


def cuda_event() -> Any:
    """A CUDA event that records time (torch.cuda.Event, unannotated in torch)."""
    return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]


def cuda_initialized() -> bool:
    """Whether CUDA has been initialized in this process (the user's code used a GPU)."""
    return bool(torch.cuda.is_initialized())  # type: ignore[no-untyped-call]  # unannotated in torch


def never_traced(reason: str) -> Callable[[_F], _F]:
    """torch.compiler.disable(reason=...) as a typed decorator: Dynamo never traces the function,
    nor what it calls."""

    def disabled(fn: _F) -> _F:
        # torch.compiler.disable is unannotated; it returns a wrapper with fn's signature.
        return cast(_F, torch.compiler.disable(fn, reason=reason))  # type: ignore[no-untyped-call]

    return disabled


def interned_strings() -> dict[int, str]:
    """The file-name table torch already interned: live events refer to it by number.

    torch logs each file name once per process (torch/_logging/structured.py, INTERN_TABLE),
    so names interned before the capture started never reach our handler again.
    """
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:  # pragma: no cover - torch without structured tracing
        return {}
    return {index: text for text, index in dict(INTERN_TABLE).items()}


class _ListHandler(logging.Handler):
    """Keeps (metadata, payload) of each record; does nothing else on torch's hot path."""

    def __init__(self, sink: Callable[[dict[str, Any], str | None], None]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            payload = getattr(record, "payload", None)
            artifact = metadata.get("artifact")
            if (
                payload
                and isinstance(artifact, dict)
                and artifact.get("name") == "fx_graph_runnable"
            ):
                payload = repro_settings.repro_as_users(payload)  # our cache folder out
            self.sink(metadata, payload)
        elif hasattr(record, "str"):  # string-table records of older torch
            self.sink({"str": record.str}, None)


@contextlib.contextmanager
def listening(sink: Callable[[dict[str, Any], str | None], None]) -> Iterator[None]:
    """Receive every structured-trace record while inside; the logger is restored after."""
    logger = logging.getLogger(TRACE_LOGGER)
    handler = _ListHandler(sink)
    old_level = logger.level
    # torch sets this logger to DEBUG and only checks that it has handlers; be sure of DEBUG.
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


def _resolve(module_name: str, dotted: str) -> tuple[object, str] | None:
    try:
        target: object = importlib.import_module(module_name)
    except ImportError:
        return None
    *parents, leaf = dotted.split(".")
    for part in parents:
        target = getattr(target, part, None)
        if target is None:
            return None
    return (target, leaf) if hasattr(target, leaf) else None


@contextlib.contextmanager
def capture_settings(
    extra: dict[str, object] | None = None, *, fresh: bool = True
) -> Iterator[None]:
    """Hold the settings a capture needs (and `extra` Inductor config), then restore. `fresh`:
    torch's caches off, one fresh cache folder and kernel provenance on, so every stage
    compiles and is logged. Otherwise nothing of ours is set: each of these settings is part
    of Inductor's cache key (provenance_tracking_level and `_save_config_ignore`, which
    `left_out_of_repros` extends, too: torch/_inductor/codecache.py FxGraphHashDetails), so the
    user's warm cache hits as it would without us."""
    changes: list[tuple[str, str, object]] = list(_CAPTURE_SETTINGS) if fresh else []
    for key, value in (extra or {}).items():
        changes.append(("torch._inductor.config", key, value))
    saved: list[tuple[object, str, object]] = []
    # Ours, to keep out of torch's repros: caches off and provenance maps change nothing that a
    # graph computes, and a repro should compile as the user's run would (with the user's
    # caches, without our logging). `extra` (the user's own Inductor options) stays in: those
    # change the code. A setting the user already had at our value is theirs, not ours.
    ours: dict[str, list[str]] = {}
    try:
        for module_name, dotted, value in changes:
            found = _resolve(module_name, dotted)
            if found is None:
                if extra and dotted in extra:
                    raise KeyError(f"unknown Inductor option {dotted!r}")
                continue  # a torch without this setting: nothing to hold
            owner, leaf = found
            saved.append((owner, leaf, getattr(owner, leaf)))
            if saved[-1][2] != value and not (extra and dotted in extra):
                ours.setdefault(module_name, []).append(dotted)
            setattr(owner, leaf, value)
        with contextlib.ExitStack() as held:
            for module_name, keys in ours.items():
                module = importlib.import_module(module_name)
                held.enter_context(repro_settings.left_out_of_repros(module, keys))
            held.enter_context(warnings.catch_warnings())
            if fresh:
                held.enter_context(_fresh_cache())
            # force_disable_caches (set by a user) makes Dynamo warn once that PGO is off.
            warnings.filterwarnings("ignore", message=".*force disabled by.*force_disable_caches")
            yield
    finally:
        for owner, leaf, value in reversed(saved):
            setattr(owner, leaf, value)


@contextlib.contextmanager
def _fresh_cache() -> Iterator[None]:
    """One fresh Inductor (and Triton) cache folder for the whole capture, kept afterwards:
    the modules and kernels loaded from it must stay loadable (torch keeps its own the same
    way, torch/_inductor/compile_fx.py with_fresh_cache_if_config)."""
    try:
        from torch._inductor.runtime.runtime_utils import cache_dir
        from torch._inductor.utils import fresh_cache
    except ImportError:  # pragma: no cover - torch before 2.8 names it fresh_inductor_cache
        try:
            from torch._inductor.runtime.runtime_utils import cache_dir
            from torch._inductor.utils import fresh_inductor_cache as fresh_cache
        except ImportError:
            yield
            return
    parent = cache_dir()  # sets TORCHINDUCTOR_CACHE_DIR to torch's default where unset
    _check_vector_isa()
    # fresh_cache points these two at the new folder; torch's repros copy the environment.
    names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    before = {name: os.environ.get(name) for name in names}
    with fresh_cache(dir=parent, delete=False):
        with repro_settings.env_changed(before, {name: os.environ.get(name) for name in names}):
            yield


def _check_vector_isa() -> None:
    """On a machine without CUDA, let Inductor check which vector instructions the C++ compiler
    can use while its cache folder is still the user's. The check builds and loads small
    programs (6 g++ runs, about 6 s on our 2-core machines) into the current cache folder, once
    per process (torch/_inductor/cpu_vec_isa.py, valid_vec_isa_list is functools.cache'd), and
    reuses them from there in later processes. Run first inside a capture's fresh folder, it
    rebuilt them in every new kernel, about 5.6 s of each fresh process's first capture (a
    small MLP, a CNN, a GPT-2: benchmarks/RESULTS.md, capture overhead, runs 2-4). Skipped with
    CUDA, where a CPU graph is rare and the check would cost a GPU user's first capture."""
    if torch.cuda.is_available():
        return
    try:
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list
    except ImportError:  # pragma: no cover - every torch from 2.8 to 2.14 has it
        return
    valid_vec_isa_list()


def current_compile_id() -> str | None:
    """The compile id torch is compiling right now (inside a backend), as the trace writes it.

    That is the trace id, restart attempt included (`2/0_1`): after a graph break Dynamo
    restarts the frame and logs the graphs and kernels under `N/M_K`, while
    CompileContext.current_compile_id() still reads `N/M` (torch/_guards.py, TraceId). Keying
    by the attempt-less id attributed a restarted compile's timings to the empty first attempt.
    """
    try:
        from torch._guards import CompileContext

        trace_id = CompileContext.current_trace_id()
    except Exception:  # pragma: no cover - guard against torch API drift
        return None
    return None if trace_id is None else str(trace_id)


def module_paths(graph_module: object) -> dict[str, str]:
    """Node name -> module path (`h.0.attn`) from a live GraphModule's `nn_module_stack`."""
    return graph_module_paths(getattr(graph_module, "graph", None))


def graph_module_paths(graph: object) -> dict[str, str]:
    """Node name -> module path for a live torch.fx.Graph (AOT copies Dynamo's node meta)."""
    paths: dict[str, str] = {}
    for node in getattr(graph, "nodes", ()):
        meta = getattr(node, "meta", {})
        # Backward nodes carry the forward module that they differentiate as
        # `fwd_nn_module_stack` (torch/_functorch/_aot_autograd/utils.py,
        # copy_fwd_metadata_to_bw_nodes).
        stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack")
        if not stack or node.op == "placeholder":  # an input's stack is that of its first use
            continue
        # Values are (qualified path, module type); the innermost module comes last.
        path = list(stack.values())[-1][0]
        paths[node.name] = _clean_module_path(str(path))
    return paths


def _clean_module_path(path: str) -> str:
    # Dynamo writes `L['self'].h[0].attn` (the frame's local, then attributes); show `h.0.attn`.
    # A module reached through another name (a notebook's global `G['model']`) keeps that
    # name as its root: `model.h.0.attn`.
    path = re.sub(r"^L\['self'\]", "", path)
    path = re.sub(r"^[LG]\['([^']*)'\]", r"\1", path)
    path = path.replace("['", ".").replace("']", "").replace("[", ".").replace("]", "")
    return path.lstrip(".") or "<root>"


@contextlib.contextmanager
def graph_pass_listeners(
    on_joint: Callable[[object], None], on_post_grad: Callable[[object], None]
) -> Iterator[None]:
    """Hear Inductor's joint graph and each post-grad graph as live fx.Graphs (read only).

    The logs print graphs without node meta, so module paths of the AOT and post-grad graphs
    are only known live. Inductor runs `joint_custom_pre_pass` on the joint graph (its node
    names are those of the forward and backward) and `post_grad_custom_post_pass` on each
    graph it lowers. A pass the user set keeps running, after ours.
    """
    try:
        import torch._inductor.config as config
        from torch._inductor.custom_graph_pass import CustomGraphPass
    except ImportError as error:  # torch without custom graph passes
        missing("module paths of the AOT and post-grad graphs", error)
        yield
        return

    class Listener(CustomGraphPass):
        def __init__(
            self, listen: Callable[[object], None], then: Callable[[object], object] | None
        ) -> None:
            self.listen, self.then = listen, then

        def __call__(self, graph: object) -> None:
            try:
                self.listen(graph)
            except Exception:  # listening must never break the user's compile
                pass
            if self.then is not None:
                self.then(graph)

        def uuid(self) -> object:
            then = getattr(self.then, "uuid", None)
            return ("compilescope.listener", then() if callable(then) else None)

        def __deepcopy__(self, memo: dict[int, object]) -> Listener:
            # torch deep-copies Inductor's config at every compile to log it
            # (torch/_dynamo/utils.py, _scrubbed_inductor_config_for_logging); a copy of this
            # hook would copy the whole capture session it reports to.
            return self

    names = ("joint_custom_pre_pass", "post_grad_custom_post_pass")
    saved = {name: getattr(config, name, None) for name in names if hasattr(config, name)}
    try:
        for name, listen in zip(names, (on_joint, on_post_grad), strict=True):
            if name in saved and not isinstance(saved[name], (list, tuple)):
                setattr(config, name, Listener(listen, saved[name]))
        yield
    finally:
        for name, value in saved.items():
            setattr(config, name, value)


def grad_enabled() -> bool:
    return torch.is_grad_enabled()


def is_module(value: object) -> TypeGuard[torch.nn.Module]:
    return isinstance(value, torch.nn.Module)


def compile_fn(
    fn: Callable[_P, _R], backend: str | Backend, *, dynamic: bool | None, fullgraph: bool
) -> Callable[_P, _R]:
    return torch.compile(fn, backend=backend, dynamic=dynamic, fullgraph=fullgraph)


def lookup_backend(name: str | Backend) -> Backend:
    from torch._dynamo import lookup_backend as lookup

    return lookup(name) if isinstance(name, str) else name


def inductor_backend(
    mode: str | None, options: dict[str, object] | None, dynamic: bool | None
) -> Backend:
    """The backend torch.compile(backend="inductor", mode=..., options=...) would use."""
    from torch import _TorchCompileInductorWrapper

    # torch's wrapper is a backend (its __call__ takes the graph and inputs); annotated from
    # torch 2.14, not before: called through Any so neither needs an ignore.
    wrapper: Any = _TorchCompileInductorWrapper
    return cast(Backend, wrapper(mode, options, dynamic))


def grad_enabled_tensor(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.requires_grad


def sum_for_backward(value: object) -> torch.Tensor | None:
    """A scalar to call backward on: the sum of every grad-requiring tensor in the output."""
    from torch.utils._pytree import tree_leaves

    leaves = [t for t in tree_leaves(value) if grad_enabled_tensor(t)]
    if not leaves:
        return None
    total: torch.Tensor = leaves[0].sum()
    for t in leaves[1:]:
        total = total + t.sum()
    return total


@contextlib.contextmanager
def compiled_autograd(backend: str | Backend) -> Iterator[None]:
    """Compiled autograd on for the block (torch._dynamo.compiled_autograd._enable)."""
    from torch._dynamo import compiled_autograd as ca

    with ca._enable(torch.compile(backend=backend)):
        yield


def reset_dynamo() -> None:
    torch._dynamo.reset()


def chosen_triton_configs(output_code_path: str) -> dict[str, dict[str, int]]:
    """The Triton config each kernel of one loaded output module runs with, after autotuning.

    Inductor binds each kernel to a CachingAutotuner (torch._inductor.runtime.triton_heuristics);
    once it has run, `launchers` holds the one launcher chosen, with its `config` (block sizes,
    num_warps, num_stages) and `n_regs` / `n_spills`. How many candidates there were is gone by
    then (precompile sets `configs` to None, torch 2.11 and 2.13); `autotune_time_taken_ns`,
    set only when more than one candidate was compiled and timed, says how long choosing took.
    The module is found by its file:
    _reload_python_module puts it in sys.modules (`torch._inductor.runtime.compile_tasks.<key>`);
    PyCodeCache lists it too while caches are on (it is empty under force_disable_caches).
    A kernel not yet run, or torch without these attributes, gives nothing rather than a guess.
    """
    import sys

    try:
        from torch._inductor.codecache import PyCodeCache

        modules = list(getattr(PyCodeCache, "modules", []))
        modules += list(getattr(PyCodeCache, "modules_no_attr", {}).values())
    except ImportError:  # pragma: no cover - torch API drift: sys.modules still has them
        modules = []
    modules += [m for n, m in list(sys.modules.items()) if n.startswith("torch._inductor.")]
    out: dict[str, dict[str, int]] = {}
    for module in modules:
        if getattr(module, "__file__", None) != output_code_path:
            continue
        for name, kernel in vars(module).items():
            launchers = getattr(kernel, "launchers", None)
            if not isinstance(launchers, list) or len(launchers) != 1:
                continue  # not run yet, or still holding every candidate
            config = getattr(launchers[0], "config", None)
            if config is None:
                continue
            chosen = {k: v for k, v in getattr(config, "kwargs", {}).items() if type(v) is int}
            for key, value in (
                ("num_warps", getattr(config, "num_warps", None)),
                ("num_stages", getattr(config, "num_stages", None)),
                ("registers", getattr(launchers[0], "n_regs", None)),
                ("spills", getattr(launchers[0], "n_spills", None)),
            ):
                if type(value) is int:
                    chosen[key] = value
            took = getattr(kernel, "autotune_time_taken_ns", None)
            if type(took) is int and took > 0:
                chosen["autotune_us"] = took // 1000
            out[name] = chosen
    return out


@contextlib.contextmanager
def bytecode_listener(hear: Callable[[types.CodeType, types.CodeType], None]) -> Iterator[None]:
    """Hear each code object Dynamo makes, while its compile id is current
    (torch._dynamo.convert_frame.register_bytecode_hook); the code is left as Dynamo made it."""
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook
    except ImportError as error:  # guard against torch API drift
        missing("compile ids of compiled forwards (held memory)", error)
        yield
        return

    def hook(code: types.CodeType, new_code: types.CodeType) -> None:
        try:
            hear(code, new_code)
        except Exception:  # listening must never break the user's compile
            pass

    handle = register_bytecode_hook(hook)
    try:
        yield
    finally:
        handle.remove()
