"""Every repro a live capture offers (torch's fx_graph_runnable scripts) runs, and is the user's."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import compilescope
import pytest
import torch
import torch._functorch.config as functorch_config
import torch._inductor.config as inductor_config
from workloads import TinyMLP

pytestmark = pytest.mark.torch

# A hook object written as Python: `custom_partitioner_fn = <abc.min_cut... object at 0x...>`.
OBJECT_REPR = re.compile(r"=\s*<")


# compilescope's own settings during a capture (live/torch_bridge.py, live/trials/torch_partitioners.py).
OURS = (
    "provenance_tracking",
    "custom_partitioner_fn",
    "fx_graph_cache",
    "fx_graph_remote_cache",
    "autograd_cache",
)


def settings_lines(repro: str) -> set[str]:
    """The lines of a repro that set config or environment (the rest is the graph), but ours:
    those are checked on their own, and a setting put back after a capture (or torch's own
    config.patch) stays set in the process, so later repros write its value."""
    return {
        line
        for line in repro.splitlines()
        if re.match(r"(torch\.\S*config\.|os\.environ\[)", line)
        and not any(key in line for key in OURS)
        # a pointer of the process that wrote it (torch/_dynamo/debug_utils.py copies it)
        and "_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR" not in line
    }


@pytest.fixture(scope="module")
def plain() -> list[str]:
    """torch's repros of the model without compilescope. Compiled twice: torch's own
    config.patch leaves settings set after a compile (deterministic, inplace_buffers, ...), and
    later repros write them, so the one compared comes after a compile, as the capture's does."""
    plain_repros()
    return plain_repros()


@pytest.fixture(scope="module")
def repros(plain) -> list[str]:
    torch.manual_seed(0)
    cap = compilescope.capture(TinyMLP(), torch.randn(4, 16), timings=False)
    return [repro for c in cap for repro in c.repros]


def plain_repros() -> list[str]:
    """What torch writes for the same model without compilescope, in this process, now."""
    heard: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            metadata = getattr(record, "metadata", {})
            if metadata.get("artifact", {}).get("name") == "fx_graph_runnable":
                heard.append(record.payload)  # type: ignore[attr-defined]

    logger = logging.getLogger("torch.__trace")
    handler, level = Handler(), logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        torch._dynamo.reset()
        # On a cache hit torch logs the repro it stored then, written by some earlier process.
        with (
            inductor_config.patch(fx_graph_cache=False),
            functorch_config.patch(enable_autograd_cache=False),
        ):
            torch.compile(TinyMLP())(torch.randn(4, 16)).sum().backward()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return heard


def test_a_forward_and_a_backward_repro(repros):
    assert len(repros) == 2


def test_repros_hold_nothing_of_compilescope(repros):
    for repro in repros:
        assert "compilescope" not in repro
        assert not OBJECT_REPR.search(repro), OBJECT_REPR.search(repro)
        # our settings: provenance maps for the view, caches off, the partitioner we listen at
        for key in OURS:
            assert key not in repro, key


def test_repros_set_what_torch_sets_without_compilescope(repros, plain):
    assert len(plain) == len(repros)
    for ours, theirs in zip(repros, plain, strict=True):
        assert settings_lines(ours) == settings_lines(theirs)


def test_torchs_ignore_lists_are_put_back(repros):
    # Changed, the list would be written into every later repro, as any changed setting is.
    for config in (inductor_config, functorch_config):
        assert "_save_config_ignore" not in config.codegen_config()
        assert not any(key in config._save_config_ignore for key in OURS)


def test_each_repro_runs(repros, tmp_path: Path):
    for index, repro in enumerate(repros):
        script = tmp_path / f"repro_{index}.py"
        script.write_text(repro)
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-3000:]


def test_the_users_own_settings_stay_in_the_repro():
    # A setting the user made (here the one compilescope would also set) is theirs: written as
    # torch writes it. The partitioner chosen through compilescope is left out like our hook:
    # a repro compiles graphs already partitioned.
    torch.manual_seed(0)
    with inductor_config.patch(fx_graph_cache=False):
        cap = compilescope.capture(
            TinyMLP(), torch.randn(4, 16), partitioner="default", timings=False
        )
    (c,) = cap
    assert len(c.repros) == 2
    for repro in c.repros:
        assert "torch._inductor.config.fx_graph_cache = False" in repro
        assert "fx_graph_remote_cache" not in repro  # ours
        assert "compilescope" not in repro and not OBJECT_REPR.search(repro)
