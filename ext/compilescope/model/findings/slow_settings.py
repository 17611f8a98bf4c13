"""Settings that pick slower kernels for another goal (deterministic algorithms; attention's fused kernels off): said with what they trade, before the causes whose time they inflate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding

if TYPE_CHECKING:
    from ..compile import Compile
    from ..measured.timing import RealSteps

# Where Dynamo's graph calls attention: F.scaled_dot_product_attention, by any of its names.
_SDPA = "scaled_dot_product_attention"
_NOT_MEASURED = "not measured apart: trying the fix measures it"
# Said whatever their share: what they cost is spread over many ops and not measured apart.
UNMEASURED_KINDS = ("deterministic_algorithms", "sdpa_math_only")


def slow_setting_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """A GPU step timed with deterministic algorithms on, or with attention's fused backends
    off while a compiled graph calls scaled_dot_product_attention."""
    s = real.settings
    if s is None or not real.device.startswith("cuda"):
        return []
    found = []
    if s.deterministic:
        found.append(
            Finding(
                kind="deterministic_algorithms",
                what=(
                    "Deterministic algorithms are on while you train "
                    "(`torch.use_deterministic_algorithms(True)` or "
                    "`torch.backends.cudnn.deterministic = True`): convolutions take cuDNN's "
                    "reproducible algorithms (its auto-tuner is off), and scatter/index_add, "
                    "embedding backward and cumsum take slower deterministic kernels, in every "
                    "step. Keep them for a run that must reproduce bit for bit."
                ),
                key="deterministic_algorithms",
                cost=Cost(note=_NOT_MEASURED),
                fixes=(remedy("nondeterministic_kernels").fix(),),
            )
        )
    ids = tuple(str(c.id) for c in capture if _calls_sdpa(c))
    if s.sdpa_math_only and ids:
        found.append(
            Finding(
                kind="sdpa_math_only",
                what=(
                    f"`scaled_dot_product_attention` runs in {', '.join(ids)} with every fused "
                    "attention backend turned off (flash, memory-efficient and cuDNN "
                    "disabled: `sdpa_kernel(SDPBackend.MATH)` or "
                    "`torch.backends.cuda.enable_flash_sdp(False)` and the like): attention is "
                    "computed unfused, the whole score matrix written and read, forward and "
                    "backward."
                ),
                key="sdpa_math_only",
                compile_ids=ids,
                cost=Cost(note=_NOT_MEASURED),
                fixes=(remedy("fused_attention_backends").fix(),),
            )
        )
    return found


def _calls_sdpa(compile_: Compile) -> bool:
    graph = compile_.graph("dynamo_output_graph")
    return graph is not None and any(_SDPA in str(n.target) for n in graph.nodes)
