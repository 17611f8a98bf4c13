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

    def build(folder: str, add: int, *flags: str, env: dict = env) -> tuple[bytes, int]:
        """Build one kernel library in a new folder, as a fresh capture does: its bytes and how
        many times the real compiler has run so far."""
        where = tmp_path / folder
        where.mkdir()
        (where / "k.cpp").write_text(KERNEL % add)
        args = [str(where / "k.cpp"), "-O2", *flags, "-shared", "-fPIC", "-o", str(where / "k.so")]
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


def test_a_store_named_for_many_runs_serves_the_next_run(compiler, tmp_path):
    """`make test` names a store that outlives the run (COMPILESCOPE_TESTS_CXX_CACHE)."""
    store = tmp_path / "kept"
    first_run = {**compiler.env, "COMPILESCOPE_TESTS_CXX_CACHE": str(store)}
    next_run = {**first_run, "COMPILESCOPE_TESTS_CACHE": str(tmp_path / "next-run")}
    first, runs = compiler("a", 1, env=first_run)
    assert runs == 1 and len(list(store.glob("*.so"))) == 1
    os.utime(next(store.glob("*.so")), (0, 0))
    again, runs = compiler("b", 1, env=next_run)
    assert runs == 1 and again == first
    assert next(store.glob("*.so")).stat().st_mtime > 0  # a hit marks it used, for the pruning


def test_the_precompiled_header_is_not_in_the_key(compiler, tmp_path):
    # torch makes it of the headers and arguments the key holds, under a name it hashes from
    # them and from absolute paths: each clone's, and each tutorial kernel's temporary folder.
    headers = []
    for where in ("t1/pch", "t2/other"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "pch.h").write_text("// one\n")
        headers.append(str(tmp_path / where / "pch.h"))
    first, _ = compiler("a", 1, "-include", headers[0])
    again, runs = compiler("b", 1, "-include", headers[1])
    assert runs == 1 and again == first


def _environment(where: Path, version: str | None) -> str:
    """A site-packages with a package `torch` of this version.py (None: none): its include
    folder."""
    include = where / "lib" / "python3.11" / "site-packages" / "torch" / "include"
    include.mkdir(parents=True)
    if version:
        (include.parent / "version.py").write_text(f"__version__ = {version!r}\n")
    return str(include)


def test_a_package_in_another_environment_is_known_by_its_version(compiler, tmp_path):
    # Each clean clone has environments of its own (.venv, .tutorials-venv).
    first, _ = compiler("a", 1, "-I" + _environment(tmp_path / "clone1", "2.14.1"))
    again, runs = compiler("b", 1, "-I" + _environment(tmp_path / "clone2", "2.14.1"))
    assert runs == 1 and again == first
    _, runs = compiler("c", 1, "-I" + _environment(tmp_path / "clone3", "2.13.0"))
    assert runs == 2
    # A package without version.py is known by its folder, as any other folder.
    for clone in ("clone4", "clone5"):
        _, runs = compiler(f"in-{clone}", 1, "-I" + _environment(tmp_path / clone, None))
    assert runs == 4


def test_a_reinstalled_include_folder_is_another_key(compiler, tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    compiler("a", 1, f"-I{include}")
    shutil.rmtree(include)
    include.mkdir()  # what reinstalling torch does to torch/include: new files, new inode
    _, runs = compiler("b", 1, f"-I{include}")
    assert runs == 2
