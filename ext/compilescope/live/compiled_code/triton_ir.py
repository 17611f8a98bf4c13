"""A Triton kernel's IR stages and launch settings: Triton's on-disk cache, Inductor's autotuner."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from ...model.capture import Capture
from .. import torch_bridge

IR_STAGES = ("ttir", "ttgir", "llir", "ptx")
LAUNCH_KEYS = ("num_warps", "num_stages", "num_ctas", "shared", "maxnreg")


# The folders between a root and Triton's per-kernel folders (`<hash>/<name>.ttir`). Inductor
# points Triton at its own cache (`<inductor cache>/triton/<device>/<hash>/`); a capture gives
# itself a fresh folder below it (`<inductor cache>/tmpXXXX/triton/<hash>/`, as
# force_disable_caches does per compile; seen on torch 2.11 with Triton 3.6); plain Triton uses
# `<TRITON_CACHE_DIR>/<hash>/`.
_LAYOUTS = ((), ("triton",), ("triton", "*"), ("tmp*", "triton"), ("tmp*", "triton", "*"))
_WANTED = frozenset((*IR_STAGES, "json"))
# Triton names a kernel's cache files after its first 150 characters (`file_name =
# src.name[:150]` in triton/compiler/compiler.py, Triton 3.x), and Inductor's fused kernel names
# grow past that on real models (a Llama's loss backward: 160).
FILE_NAME_CHARS = 150


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


def _folders(root: Path, layout: tuple[str, ...]) -> list[Path]:
    """The folders that `layout` names below `root` (`*` and `tmp*` as in a glob)."""
    folders = [root]
    for part in layout:
        below = []
        for folder in folders:
            if "*" not in part:
                below += [folder / part] if (folder / part).is_dir() else []
                continue
            prefix = part.rstrip("*")
            try:
                below += [
                    Path(e.path)
                    for e in os.scandir(folder)
                    if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)
                ]
            except OSError:
                continue
        folders = below
    return folders


def files_written_since(
    roots: list[Path], names: set[str], since: float
) -> dict[str, dict[str, Path]]:
    """Kernel name -> IR stage -> its newest file written at or after `since`, below `roots`.

    One pass over the folders, whatever the number of kernels: a search per kernel name read
    every kernel folder once per kernel, seconds for a model with a few hundred kernels. A
    kernel folder older than `since` is skipped unread: Triton moves each finished file into
    it (os.replace in triton/runtime/cache.py), which dates the folder. Files of a name cut to
    FILE_NAME_CHARS belong to the one kernel of that prefix, or to the one the folder's
    metadata (`<stem>.json`, whose "name" is whole) names where several share it.
    """
    by_stem: dict[str, list[str]] = {}
    for name in names:
        by_stem.setdefault(name[:FILE_NAME_CHARS], []).append(name)
    found: dict[str, dict[str, tuple[float, Path]]] = {}
    for root in roots:
        for layout in _LAYOUTS:
            for parent in _folders(root, layout):
                try:
                    kernel_folders = [
                        e for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)
                    ]
                except OSError:
                    continue
                for folder in kernel_folders:
                    try:
                        if folder.stat().st_mtime < since:
                            continue
                        entries = list(os.scandir(folder.path))
                    except OSError:
                        continue
                    for entry in entries:
                        stem, dot, suffix = entry.name.rpartition(".")
                        if not dot or stem not in by_stem or suffix not in _WANTED:
                            continue
                        kernel = _kernel_of(by_stem[stem], Path(folder.path) / f"{stem}.json")
                        if kernel is None:
                            continue
                        mtime = entry.stat().st_mtime
                        best = found.setdefault(kernel, {}).get(suffix)
                        if mtime >= since and (best is None or best[0] < mtime):
                            found[kernel][suffix] = (mtime, Path(entry.path))
    return {name: {s: path for s, (_, path) in stages.items()} for name, stages in found.items()}


def _kernel_of(candidates: list[str], metadata: Path) -> str | None:
    """Which of the kernels whose names share a cache file stem wrote this folder."""
    if len(candidates) == 1:
        return candidates[0]
    try:
        name = json.loads(metadata.read_text()).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if name in candidates else None


def with_triton_ir(capture: Capture, since: float) -> Capture:
    """Attach each Triton kernel's IR texts and launch settings written after `since`.

    Triton names cache files after the kernel (`<hash>/<name>.ttir`); names repeat across
    compiles, so only files written during this capture count, and the newest wins.
    """
    names = {k.name for c in capture for k in c.kernels if k.language == "triton"}
    if not names:
        return capture
    found = files_written_since(cache_roots(), names, since)
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
