"""Triton IR stages and launch settings read from Triton's cache (a cache laid out as Triton does)."""

from __future__ import annotations

import json
import os
import time

import pytest
from compilescope.live.compiled_code.triton_ir import files_written_since, with_triton_ir
from compilescope.model.capture import Capture
from compilescope.model.compile import Compile
from compilescope.model.compile_id import CompileId
from compilescope.trace.output_code import split_output_code
from compilescope.views.view_data import capture_data

pytestmark = pytest.mark.torch

MODULE = """
# AOT ID: ['0_forward']
triton_poi_fused_relu_0 = async_compile.triton('triton_poi_fused_relu_0', '''
@triton.jit
def triton_poi_fused_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    pass
''', device_str='cuda')

def call(args):
    triton_poi_fused_relu_0.run(buf0, buf1, 1024, stream=stream0)
"""


def write_kernel(root, digest: str, ttir: str, mtime: float) -> None:
    folder = root / digest if digest else root
    folder.mkdir(parents=True)
    files = {
        "triton_poi_fused_relu_0.ttir": ttir,
        "triton_poi_fused_relu_0.ptx": "// ptx " + ttir,
        "triton_poi_fused_relu_0.json": json.dumps({"num_warps": 4, "num_stages": 2, "shared": 0}),
        "other_kernel.ttir": "not ours",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
        os.utime(folder / name, (mtime, mtime))


@pytest.mark.parametrize("layout", ["{}", "tmpab12/triton/{}", "triton/0/{}"])
def test_ir_and_launch_of_this_capture_only(tmp_path, monkeypatch, layout):
    # Triton's own layout, and Inductor's (a fresh temporary cache per compile when caches
    # are off, as during a capture; a per-device folder otherwise).
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    started = time.time() - 10
    write_kernel(tmp_path / layout.format("old"), "", "module { old }", started - 100)
    write_kernel(tmp_path / layout.format("new"), "", "module { new }", started + 5)
    code = split_output_code(MODULE)
    capture = Capture((Compile(CompileId(frame_id=0, frame_compile_id=0), output_code=(code,)),))
    (kernel,) = with_triton_ir(capture, started)[0].kernels
    assert kernel.ir == {"ttir": "module { new }", "ptx": "// ptx module { new }"}
    assert kernel.launch == {"num_warps": 4, "num_stages": 2, "shared": 0}
    (shown,) = capture_data(with_triton_ir(capture, started))["compiles"][0]["kernels"]
    assert shown["ir"]["ttir"] == "module { new }" and shown["launch"]["num_warps"] == 4
    # A capture with no Triton kernels is returned as it was.
    assert with_triton_ir(Capture(), started) == Capture()


def test_one_pass_finds_many_kernels_and_skips_folders_older_than_the_capture(
    tmp_path, monkeypatch
):
    # Triton moves each finished file into its kernel folder, which dates the folder: a folder
    # older than the capture is not read, even where a file in it claims to be newer.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    started = time.time() - 10
    names = {f"triton_poi_fused_{i}" for i in range(60)}
    for i, name in enumerate(sorted(names)):
        folder = tmp_path / "tmpab12" / "triton" / "0" / f"h{i}"
        folder.mkdir(parents=True)
        (folder / f"{name}.ttir").write_text(f"module {{ {name} }}")
    stale = tmp_path / "triton" / "0" / "stale"
    stale.mkdir(parents=True)
    (stale / "triton_poi_fused_0.ptx").write_text("// stale")
    os.utime(stale, (started - 100, started - 100))
    found = files_written_since([tmp_path], names, started)
    assert set(found) == names
    assert found["triton_poi_fused_7"]["ttir"].read_text() == "module { triton_poi_fused_7 }"
    assert "ptx" not in found["triton_poi_fused_0"]


def test_kernel_names_past_tritons_150_characters(tmp_path, monkeypatch):
    # Triton cuts a cache file's name to the kernel name's first 150 characters; Inductor's
    # names grow past that (a Llama's fused loss backward: 160, seen on an H100). Two kernels
    # that share the first 150 are told apart by the "name" in their folder's metadata.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    started = time.time() - 10
    stem = "triton_red_fused_" + "_".join(["log_softmax_backward_data"] * 6)
    assert len(stem) > 150
    long_a, long_b, alone = stem + "_0", stem + "_1", "triton_poi_fused_" + "x" * 150 + "_2"
    for digest, name in (("a", long_a), ("b", long_b), ("c", alone)):
        folder = tmp_path / digest
        folder.mkdir()
        (folder / f"{name[:150]}.ttir").write_text(f"module {{ {name[-2:]} }}")
        (folder / f"{name[:150]}.json").write_text(json.dumps({"name": name, "num_warps": 8}))
    found = files_written_since([tmp_path], {long_a, long_b, alone}, started)
    assert {n: f["ttir"].read_text() for n, f in found.items()} == {
        long_a: "module { _0 }",
        long_b: "module { _1 }",
        alone: "module { _2 }",
    }
    # The kernel alone with its prefix needs no metadata; twins without it are left unread.
    (tmp_path / "c" / f"{alone[:150]}.json").unlink()
    (tmp_path / "b" / f"{long_b[:150]}.json").unlink()
    found = files_written_since([tmp_path], {long_a, long_b, alone}, started)
    assert set(found) == {long_a, alone}
