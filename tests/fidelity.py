"""Compare a compilescope capture with tlparse's reading of the same TORCH_TRACE log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from compilescope import Capture
from compilescope.model.compile import Compile
from tlparse_reference import (
    STAGES,
    kernels_by_compile_id,
    output_code_by_compile_id,
    run_tlparse,
    stages_by_compile_id,
)


def model_stages(compile_: Compile) -> Counter:
    """What the model holds of each stage, counted like tlparse counts artifacts."""
    stages = Counter({kind: len(graphs) for kind, graphs in compile_.graphs.items()})
    stages["inductor_output_code"] = len(compile_.output_code)
    # tlparse counts every message; the model keeps breaks and fallbacks to eager apart.
    stages["dynamo_graph_break_reason"] = len(compile_.breaks_and_fallbacks)
    stages["recompile_reasons"] = int(bool(compile_.recompile_reasons))
    stages["dynamo_cpp_guards_str"] = int(bool(compile_.guards))
    return Counter({k: v for k, v in stages.items() if v and k in STAGES})


def differences(capture: Capture, log: Path, tl_out: Path) -> list[str]:
    """Every way the capture disagrees with tlparse on `log`; [] when they agree."""
    directory = run_tlparse(log, tl_out)
    reference = stages_by_compile_id(directory)
    problems = []
    ours = {str(c.id): c for c in capture if c.artifacts}
    if set(ours) != set(reference):
        problems.append(f"compile ids: ours {sorted(ours)} vs tlparse {sorted(reference)}")
    for cid in sorted(set(ours) & set(reference)):
        mine, theirs = model_stages(ours[cid]), reference[cid]
        if mine != theirs:
            problems.append(f"{cid} stages: ours {dict(mine)} vs tlparse {dict(theirs)}")
    code = output_code_by_compile_id(directory, tl_out)
    for cid, compile_ in ours.items():
        missing = [k.name for k in compile_.kernels if k.name not in code.get(cid, "")]
        if missing:
            problems.append(f"{cid} kernels not in tlparse's output code: {missing}")
    for cid, names in kernels_by_compile_id(directory, tl_out).items():
        if cid not in ours:
            continue
        mine = {k.name for k in ours[cid].kernels}
        generated = {k.name for k in ours[cid].kernels if k.language != "extern"}
        if not names <= mine or not generated <= names:
            problems.append(f"{cid} kernels: ours {sorted(mine)} vs tlparse {sorted(names)}")
    return problems
