"""A fresh virtual environment built from binder/'s files, cached by their hash, for the tutorials.

repo2docker installs binder/requirements.txt, then runs binder/postBuild. Here the same two steps
run in a plain venv, with one substitution: the CPU wheel index is dropped and `torch==X+cpu`
becomes `torch==X`, which on our machines resolves to the CPU build already on disk.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
NOTEBOOKS = ROOT / "notebooks"
CACHE = ROOT / ".tutorials-venv"  # gitignored; one folder per hash of what the venv is made from
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
BINDER_FILES = ("requirements.txt", "runtime.txt", "apt.txt", "postBuild", "start")
KERNEL_NAME = "compilescope-tutorials"


def local_requirements(text: str) -> list[str]:
    """binder/requirements.txt for this machine: no CPU index line, `torch==X+cpu` -> `torch==X`.

    Raises ValueError when the file no longer pins a CPU torch from the CPU index, since then the
    substitution would test something other than what Binder installs.
    """
    out, index, torch_pin = [], False, None
    for line in text.splitlines():
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        if item.startswith(("--extra-index-url", "--index-url", "-i ")):
            if item.split()[-1].rstrip("/") != CPU_INDEX:
                raise ValueError(f"unexpected package index in binder/requirements.txt: {item}")
            index = True
            continue
        pin = re.fullmatch(r"torch==([0-9][\w.]*)\+cpu", item)
        if pin:
            torch_pin = pin.group(1)
            item = f"torch=={torch_pin}"
        out.append(item)
    if not (index and torch_pin):
        raise ValueError("binder/requirements.txt should pin torch==X+cpu from " + CPU_INDEX)
    return out


def runtime_python() -> str:
    """The Python version runtime.txt asks for ("python-3.11" -> "3.11")."""
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", text)
    if not match:
        raise ValueError(f"binder/runtime.txt: expected python-X.Y, got {text!r}")
    return match.group(1)


def find_python(version: str) -> str | None:
    """An interpreter of that version: this one, or pythonX.Y on PATH."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    return shutil.which(f"python{version}")


def env_key() -> str:
    """Hash of what the venv is made from: binder's files and the package's own dependencies."""
    digest = hashlib.sha256()
    for name in BINDER_FILES:
        digest.update(name.encode() + b"\0" + (BINDER / name).read_bytes() + b"\0")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    digest.update(json.dumps(project["project"]["dependencies"], sort_keys=True).encode())
    digest.update(json.dumps(project["build-system"], sort_keys=True).encode())
    # What an editable install maps (hatch's package folders).
    digest.update(json.dumps(project.get("tool", {}).get("hatch", {}), sort_keys=True).encode())
    digest.update(Path(__file__).read_bytes())  # how the venv is built
    return digest.hexdigest()[:16]


def _run(cmd: list[str], log: Path, **kwargs) -> None:
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode != 0:
        tail = log.read_text()[-4000:]
        raise RuntimeError(f"{cmd[:4]} failed ({done.returncode}); log {log}:\n{tail}")


def venv_env(venv: Path) -> dict[str, str]:
    """Environment variables of a shell in which `python` and `pip` are the venv's."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def build(venv: Path, python: str) -> None:
    """Make the venv as repo2docker would: requirements.txt, then postBuild from the repo root."""
    shutil.rmtree(venv, ignore_errors=True)
    venv.mkdir(parents=True)
    log = venv / "build.log"
    _run([python, "-m", "venv", str(venv)], log)
    requirements = venv / "requirements-local.txt"
    requirements.write_text(
        "\n".join(local_requirements((BINDER / "requirements.txt").read_text())) + "\n"
    )
    py = str(venv / "bin" / "python")
    _run([py, "-m", "pip", "install", "-q", "-r", str(requirements)], log)
    _run(["bash", str(BINDER / "postBuild")], log, cwd=ROOT, env=venv_env(venv))


def tutorial_venv() -> Path:
    """The venv for the current binder files, built once and reused while they do not change."""
    python = find_python(runtime_python())
    if python is None:
        raise RuntimeError(f"binder/runtime.txt asks for Python {runtime_python()}; none found")
    key = env_key()
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time, also across pytest processes
        venv = CACHE / key
        if not (venv / "READY").exists():
            for old in CACHE.iterdir():  # environments of earlier binder files
                if old.is_dir() and old.name != key:
                    shutil.rmtree(old, ignore_errors=True)
            build(venv, python)
            (venv / "READY").write_text(key)
    return venv


def install_kernelspec(venv: Path, root: Path) -> None:
    """A kernelspec under `root` for the venv's Python, started through binder/start; `root` goes
    first on JUPYTER_PATH."""
    spec = root / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    env = venv_env(venv)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                # Through binder/start, as on Binder (it sets the kernel's environment, then execs).
                "argv": [
                    "bash",
                    str(BINDER / "start"),
                    str(venv / "bin" / "python"),
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "compilescope tutorials (binder env)",
                "language": "python",
                "env": {"PATH": env["PATH"], "VIRTUAL_ENV": env["VIRTUAL_ENV"]},
            }
        )
    )
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(root), os.environ.get("JUPYTER_PATH", "")])


if __name__ == "__main__":  # `make tutorials-env`: built beside `make setup`, before any test
    print(tutorial_venv())
