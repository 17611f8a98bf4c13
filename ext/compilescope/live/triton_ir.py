"""A Triton kernel's IR stages and launch settings: Triton's on-disk cache, Inductor's autotuner."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from ..model.capture import Capture
from . import torch_bridge

IR_STAGES = ("ttir", "ttgir", "llir", "ptx")
LAUNCH_KEYS = ("num_warps", "num_stages", "num_ctas", "shared", "maxnreg")


# Where a kernel's files sit below a root. Inductor points Triton at its own cache
# (`<inductor cache>/triton/<device>/<hash>/`); a capture gives itself a fresh folder below it
# (`<inductor cache>/tmpXXXX/triton/<hash>/`, as force_disable_caches does per compile; seen on
# torch 2.11 with Triton 3.6); plain Triton uses `<TRITON_CACHE_DIR>/<hash>/`.
_LAYOUTS = ("*/{}", "triton/*/{}", "triton/*/*/{}", "tmp*/triton/*/{}", "tmp*/triton/*/*/{}")


def cache_roots() -> list[Path]:
    """Where Triton may have written kernels: TRITON_CACHE_DIR, Inductor's cache, Triton's."""
    roots = []
    if os.environ.get("TRITON_CACHE_DIR"):
        roots.append(Path(os.environ["TRITON_CACHE_DIR"]))
    try:
        from torch._inductor.runtime.runtime_utils import cache_dir

        roots.append(Path(cache_dir()))
    except Exception:  # pragma: no cover - torch API drift: the other roots still work
        pass
    roots.append(Path.home() / ".triton" / "cache")
    return [r for r in dict.fromkeys(roots) if r.is_dir()]


def _candidates(root: Path, names: set[str]):
    for layout in _LAYOUTS:
        for name in names:
            yield from root.glob(layout.format(name + ".*"))


def with_triton_ir(capture: Capture, since: float) -> Capture:
    """Attach each Triton kernel's IR texts and launch settings written after `since`.

    Triton names cache files after the kernel (`<hash>/<name>.ttir`); names repeat across
    compiles, so only files written during this capture count, and the newest wins.
    """
    names = {k.name for c in capture for k in c.kernels if k.language == "triton"}
    if not names:
        return capture
    found: dict[str, dict[str, Path]] = {}
    for root in cache_roots():
        for path in _candidates(root, names):
            stem, suffix = path.stem, path.suffix.lstrip(".")
            if stem not in names or suffix not in (*IR_STAGES, "json"):
                continue
            mtime = path.stat().st_mtime
            if mtime < since:
                continue
            best = found.setdefault(stem, {}).get(suffix)
            if best is None or best.stat().st_mtime < mtime:
                found[stem][suffix] = path
    if not found:
        return capture
    compiles = []
    for c in capture:
        codes = []
        for code in c.output_code:
            kernels = []
            for k in code.kernels:
                files = found.get(k.name) if k.language == "triton" else None
                if files:
                    k = replace(k, ir=_read_ir(files), launch=_read_launch(files.get("json")))
                kernels.append(k)
            codes.append(replace(code, kernels=tuple(kernels)))
        compiles.append(replace(c, output_code=tuple(codes)))
    return replace(capture, compiles=tuple(compiles))


def _read_ir(files: dict[str, Path]) -> dict[str, str]:
    return {s: files[s].read_text(errors="replace") for s in IR_STAGES if s in files}


def _read_launch(path: Path | None) -> dict[str, int]:
    if path is None:
        return {}
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: meta[k] for k in LAUNCH_KEYS if isinstance(meta.get(k), int)}


def with_autotune_choices(capture: Capture) -> Capture:
    """Add the config each Triton kernel runs with (block sizes, `num_warps`, `num_stages`,
    registers and spills, and how long autotuning took) to `Kernel.launch`.
    Read per output module, so two compiles' kernels of the same name are not mixed up."""
    if not any(k.language == "triton" for c in capture for k in c.kernels):
        return capture
    compiles = []
    for c in capture:
        codes = []
        for code in c.output_code:
            chosen = torch_bridge.chosen_triton_configs(code.path) if code.path else {}
            kernels = tuple(
                replace(k, launch={**k.launch, **chosen[k.name]}) if k.name in chosen else k
                for k in code.kernels
            )
            codes.append(replace(code, kernels=kernels))
        compiles.append(replace(c, output_code=tuple(codes)))
    return replace(capture, compiles=tuple(compiles))
