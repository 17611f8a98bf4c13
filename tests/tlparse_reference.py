"""tlparse, the reference parser of TORCH_TRACE logs: what it says a log holds, per compile id."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

# The stages compared: torch's graph events and Inductor's output code.
STAGES = frozenset(
    {
        "dynamo_output_graph",
        "before_pre_grad_graph",
        "after_pre_grad_graph",
        "aot_joint_graph",
        "aot_forward_graph",
        "aot_backward_graph",
        "aot_inference_graph",
        "before_post_grad_graph",
        "inductor_post_grad_graph",
        "compiled_autograd_graph",
        "inductor_output_code",
        "dynamo_graph_break_reason",
        "recompile_reasons",
        "dynamo_cpp_guards_str",
    }
)
_NUMBERED = re.compile(r"^(.*?)(?:_[a-z0-9]{52})?_\d+(?:_readable)?\.(?:txt|json|html)$")


def tlparse_binary() -> str:
    found = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    if not Path(found).exists():
        raise RuntimeError("tlparse is not installed (pip install tlparse)")
    return found


def run_tlparse(log: Path, out: Path) -> dict:
    """tlparse's compile_directory.json for `log`."""
    subprocess.run(
        # --plain-text: output code as text, so kernel names can be looked up in it.
        [tlparse_binary(), str(log), "-o", str(out), "--no-browser", "--overwrite", "--plain-text"],
        check=True,
        capture_output=True,
    )
    return json.loads((out / "compile_directory.json").read_text())


def stages_by_compile_id(directory: dict) -> dict[str, Counter]:
    """Compile id (`0/0`) -> count of each stage artifact tlparse wrote for it."""
    result: dict[str, Counter] = {}
    for key, entry in directory.items():
        cid = key.strip("[]")
        if cid == "-/-":
            continue
        names = Counter()
        for artifact in entry.get("artifacts", []):
            match = _NUMBERED.match(artifact["name"])
            name = match.group(1) if match else artifact["name"]
            if name in STAGES:
                names[name] += 1
        result[cid] = names
    return result


def output_code_by_compile_id(directory: dict, out: Path) -> dict[str, str]:
    """Compile id -> the text of every inductor_output_code tlparse wrote for it."""
    result: dict[str, str] = {}
    for key, entry in directory.items():
        texts = [
            (out / a["url"]).read_text()
            for a in entry.get("artifacts", [])
            if a["name"].startswith("inductor_output_code")
        ]
        if texts:
            result[key.strip("[]")] = "\n".join(texts)
    return result


def kernels_by_compile_id(directory: dict, out: Path) -> dict[str, set[str]]:
    """Compile id -> kernel names in torch's provenance artifacts that its output code defines.

    torch 2.13's kernel_stack_traces can carry kernels of an earlier compile (its provenance
    tables are process-global), so names absent from the compile's own output code are dropped.
    """
    code = output_code_by_compile_id(directory, out)
    result: dict[str, set[str]] = {}
    for key, entry in directory.items():
        names: set[str] = set()
        for artifact in entry.get("artifacts", []):
            name = artifact["name"]
            if not name.endswith(".json") or "provenance_tracking" not in name:
                continue
            data = json.loads((out / artifact["url"]).read_text())
            if "kernel_stack_traces" in name:
                keys = data.keys()
            else:
                keys = [k for m in ("cppCodeToPost", "tritonCodeToPost") for k in data.get(m, {})]
            names.update(k.rsplit(":", 1)[0] for k in keys)
        text = code.get(key.strip("[]"), "")
        names = {n for n in names if n in text}
        if names:
            result[key.strip("[]")] = names
    return result
