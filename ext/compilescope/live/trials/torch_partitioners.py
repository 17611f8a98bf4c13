"""AOTAutograd's partitioners, inside torch: hear what they are given, run them again."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from .. import repro_settings, torch_bridge

_DEFAULT_UUID = "compilescope.default_partition"

_Graphs = tuple[torch.fx.GraphModule, torch.fx.GraphModule]  # (forward, backward)
# AOTAutograd's partition_fn: the joint graph, its inputs and options -> forward and backward.
PartitionFn = Callable[..., _Graphs]
# Told of each partitioner call: the partitioner's name, the joint graph, its inputs, options.
PartitionListener = Callable[[str, torch.fx.GraphModule, object, dict[str, Any]], None]


def default_partitioner() -> object:
    """Inductor's `custom_partitioner_fn` set to AOTAutograd's default (non-remat) partition."""
    try:
        from torch._functorch.partitioners import default_partition
        from torch._inductor.custom_graph_pass import CustomPartitionerFn
    except ImportError as error:  # torch < 2.8 has no custom partitioner hook
        raise ValueError(
            f"this torch ({torch.__version__}) cannot change Inductor's partitioner"
        ) from error

    # Inductor calls the partitioner with min-cut's arguments (compiler=..., see
    # torch/_inductor/compile_fx.py partition_fn); default_partition takes fewer, so pass
    # only the keywords it declares.
    accepted = set(inspect.signature(default_partition).parameters)

    class DefaultPartition(CustomPartitionerFn):
        def __call__(
            self, gm: torch.fx.GraphModule, joint_inputs: Sequence[object], **kwargs: Any
        ) -> _Graphs:
            kept = {name: value for name, value in kwargs.items() if name in accepted}
            return default_partition(gm, joint_inputs, **kept)

        def uuid(self) -> str:
            return _DEFAULT_UUID

    return DefaultPartition()


# The partition lab (live/trials/partition_lab.py): hear the partitioner's input, run it again later.
_partition_listener: PartitionListener | None = None


def _heard(
    name: str, graph_module: torch.fx.GraphModule, joint_inputs: object, kwargs: dict[str, Any]
) -> None:
    listener = _partition_listener
    if listener is not None:
        try:
            listener(name, graph_module, joint_inputs, kwargs)
        except Exception:  # hearing must never break the user's compile
            pass


def heard_partition_fn(inner: PartitionFn, name: str) -> PartitionFn:
    """A partition_fn (for aot_autograd backends) that the active listener hears first."""

    def partition(
        graph_module: torch.fx.GraphModule, joint_inputs: object, **kwargs: Any
    ) -> _Graphs:
        _heard(name, graph_module, joint_inputs, kwargs)
        return inner(graph_module, joint_inputs, **kwargs)

    return partition


@contextlib.contextmanager
def partitioner_listener(
    hear: PartitionListener,
) -> Iterator[None]:
    """Hear every partitioner call while inside: Inductor's, through its custom_partitioner_fn
    hook (torch >= 2.8; whatever partitioner was set still runs), and the aot_eager backends
    built by `aot_eager_backend`. Inductor runs its joint-graph passes before calling the hook,
    so what is heard is exactly the partitioner's input."""
    global _partition_listener
    try:
        import torch._inductor.config as config
        from torch._functorch.partitioners import min_cut_rematerialization_partition
        from torch._inductor.custom_graph_pass import CustomPartitionerFn
    except ImportError:  # pragma: no cover - torch without the hook: aot_eager only
        config = None  # type: ignore[assignment]  # the module, where torch has it
    previous = getattr(config, "custom_partitioner_fn", None) if config is not None else None
    installed = config is not None and hasattr(config, "custom_partitioner_fn")
    if installed:
        if previous is None:
            inner, name = min_cut_rematerialization_partition, "min_cut"
        else:
            uuid = getattr(previous, "uuid", lambda: None)()
            inner, name = previous, ("default" if uuid == _DEFAULT_UUID else "custom")

        def call(
            self: object, graph_module: torch.fx.GraphModule, joint_inputs: object, **kwargs: Any
        ) -> _Graphs:
            _heard(name, graph_module, joint_inputs, kwargs)
            return inner(graph_module, joint_inputs, **kwargs)

        def uuid(self: object) -> object:
            inner_uuid = getattr(inner, "uuid", None)
            return ("compilescope.heard", inner_uuid() if callable(inner_uuid) else name)

        # Named after the partitioner it runs: Inductor times the hook under its class name,
        # and the stage waterfall should read as it does without compilescope.
        label = getattr(inner, "__name__", None) or type(inner).__name__
        # Not copied when torch deep-copies Inductor's config to log it (see graph_pass_listeners).
        heard_class = type(
            label,
            (CustomPartitionerFn,),
            {"__call__": call, "uuid": uuid, "__deepcopy__": lambda self, memo: self},
        )
        config.custom_partitioner_fn = heard_class()
    _partition_listener = hear
    # Our hook is kept out of torch's repros (live/repro_settings.py): written there, it reads
    # `<... object at 0x...>`, a SyntaxError. A partitioner the user set goes with it, and the
    # repro runs as before: it compiles graphs already partitioned (compile_fx_inner), so no
    # partitioner setting changes what it does.
    left_out = ("custom_partitioner_fn",) if installed else ()
    try:
        with repro_settings.left_out_of_repros(config, left_out):
            yield
    finally:
        _partition_listener = None
        if installed:
            config.custom_partitioner_fn = previous


def aot_eager_backend(partitioner: str) -> torch_bridge.Backend:
    """torch's aot_eager (min_cut) or aot_eager_default_partitioner, with a heard partitioner
    (torch/_dynamo/backends/debugging.py builds them the same way)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.backends.debugging import boxed_nop

    return aot_autograd(
        fw_compiler=boxed_nop,
        bw_compiler=boxed_nop,
        partition_fn=heard_partition_fn(partitioner_fn(partitioner), partitioner),
        keep_inference_input_mutations=True,
    )


def partitioner_fn(name: str) -> PartitionFn:
    """AOTAutograd's partitioner by compilescope's name for it."""
    from torch._functorch import partitioners

    by_name: dict[str, PartitionFn] = {
        "min_cut": partitioners.min_cut_rematerialization_partition,
        "default": partitioners.default_partition,
    }
    return by_name[name]


def copy_graph_module(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy the partitioner may edit: a new graph (node meta copied shallowly, so fake
    tensors are shared, not duplicated), the same owning module for attributes."""
    import copy
    import warnings

    with warnings.catch_warnings():
        # Copying a graph pickles its pytree specs; torch 2.13 warns that LeafSpec checks are
        # deprecated (torch/utils/_pytree.py) from inside the copy: not the user's concern.
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        return torch.fx.GraphModule(graph_module, copy.deepcopy(graph_module.graph))


def activation_memory_budget() -> float | None:
    value = getattr(torch._functorch.config, "activation_memory_budget", None)
    return float(value) if isinstance(value, (int, float)) else None


def functorch_config() -> dict[str, object]:
    """torch._functorch.config's current values (what the partitioners read)."""
    try:
        return dict(torch._functorch.config.get_config_copy())
    except Exception:  # pragma: no cover - torch API drift: run with today's settings
        return {}


@contextlib.contextmanager
def functorch_config_held(saved: dict[str, object], memory_budget: float | None) -> Iterator[None]:
    """Hold torch._functorch.config as it was when the joint graph was heard, with a budget."""
    config = torch._functorch.config
    changes: dict[str, object] = {}
    for key, value in saved.items():
        try:
            if getattr(config, key) != value:
                changes[key] = value
        except Exception:  # a setting that cannot be read back: leave it as it is now
            continue
    changes["activation_memory_budget"] = 1.0 if memory_budget is None else memory_budget
    with config.patch(changes):
        yield


@contextlib.contextmanager
def as_in_a_compile(joint_inputs: object) -> Iterator[None]:
    """What AOTAutograd's partition call runs under: no grad, and a tracing context. Without
    one, FX's dead-code elimination keeps every random op, used or not (fx/graph.py,
    eliminate_dead_code: impure_random unless TracingContext.try_get()), so a re-run would
    keep dead nodes (e.g. a forward sdpa in the backward) the compile removed."""
    from torch._guards import TracingContext, detect_fake_mode, tracing

    fake_mode = detect_fake_mode(joint_inputs)
    with torch.no_grad(), tracing(TracingContext(fake_mode)):
        yield


def flops_of(graph_module: torch.fx.GraphModule, names: set[str]) -> int | None:
    """FLOPs of the named nodes, by torch's own formulas, from their fake-tensor metadata.
    None when torch cannot count one of them (symbolic sizes without a hint)."""
    from torch.utils._pytree import tree_map_only

    from ..timing.flop_count import formula_flops

    total = 0
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.name not in names:
            continue
        packet = getattr(node.target, "_overloadpacket", None)
        args, kwargs = tree_map_only(
            torch.fx.Node, lambda n: n.meta.get("val"), (node.args, node.kwargs)
        )
        count = formula_flops(packet, args, kwargs, node.meta.get("val"))
        if count is None:
            from torch.utils.flop_counter import flop_registry

            if packet in flop_registry:  # a formula that could not be applied
                return None
            continue
        total += count
    return total
