"""The tests' C++ compiler: a kernel library built once a run comes back from its cache."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parent / "compiler_cache" / "g++"
KERNEL = 'extern "C" int kernel(int x) { return x + %d; }\n'


@pytest.fixture
def compiler(tmp_path):
    """The shim over a real compiler that logs each call, with an empty cache folder."""
    calls = tmp_path / "calls.txt"
    real = tmp_path / "real-g++"
    # The g++ on PATH may be the shim itself (tests/conftest.py): call the one it stands for.
    elsewhere = [p for p in os.environ["PATH"].split(os.pathsep) if p != str(SHIM.parent)]
    gxx = shutil.which("g++", path=os.pathsep.join(elsewhere))
    real.write_text(f'#!/bin/bash\necho "$*" >> {calls}\nexec {gxx} "$@"\n')
    real.chmod(0o755)
    env = {
        **os.environ,
        "COMPILESCOPE_TESTS_REAL_CXX": str(real),
        "COMPILESCOPE_TESTS_CACHE": str(tmp_path / "run"),
    }

    def build(folder: str, add: int) -> tuple[bytes, int]:
        """Build one kernel library in a new folder, as a fresh capture does: its bytes and how
        many times the real compiler has run so far."""
        where = tmp_path / folder
        where.mkdir()
        (where / "k.cpp").write_text(KERNEL % add)
        args = [str(where / "k.cpp"), "-O2", "-shared", "-fPIC", "-o", str(where / "k.so")]
        subprocess.run([str(SHIM), *args], env=env, check=True)
        runs = len(calls.read_text().splitlines()) if calls.exists() else 0
        return (where / "k.so").read_bytes(), runs

    build.env = env  # type: ignore[attr-defined]
    return build


def test_the_same_kernel_in_another_folder_is_not_compiled_again(compiler):
    first, runs = compiler("a", 1)
    assert runs == 1
    again, runs = compiler("b", 1)
    assert runs == 1 and again == first  # from the cache, byte for byte


def test_another_kernel_text_is_compiled(compiler):
    compiler("a", 1)
    other, runs = compiler("b", 2)
    assert runs == 2 and other  # a new key: the real compiler built it


def test_other_calls_go_to_the_real_compiler(compiler):
    out = subprocess.run(
        [str(SHIM), "--version"], env=compiler.env, capture_output=True, text=True, check=True
    )
    assert "g++" in out.stdout or "GCC" in out.stdout


def test_a_failed_compile_fails_and_is_not_kept(compiler, tmp_path):
    bad = tmp_path / "bad.cpp"
    bad.write_text("this is not C++\n")
    failed = subprocess.run(
        [str(SHIM), str(bad), "-shared", "-o", str(tmp_path / "bad.so")],
        env=compiler.env,
        capture_output=True,
    )
    assert failed.returncode != 0 and b"error" in failed.stderr
    assert not (tmp_path / "run" / "cxx-cache").exists()
