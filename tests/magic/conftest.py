"""A real IPython shell (IPython.testing.globalipapp) with compilescope loaded."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def ip():
    from IPython.testing import globalipapp

    # One test shell per process: start_ipython() returns None once another test started it.
    globalipapp.start_ipython()
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "compilescope")
    # torch's own lazy TORCH_TRACE handler removes itself at the first compile of a process
    # (no TORCH_TRACE set); compile once first so state comparisons see only our changes.
    shell.run_cell(
        "import torch\ntorch.manual_seed(0)\n"
        "torch.compile(lambda a: a + 1, backend='eager')(torch.ones(1))"
    )
    return shell


@pytest.fixture
def run(ip):
    """Run a cell through IPython as a user would; returns IPython's ExecutionResult."""

    def go(cell: str, magic_line: str = "--backend aot_eager"):
        text = f"%%compile_fx {magic_line}\n{cell}" if magic_line is not None else cell
        return ip.run_cell(text, store_history=True)  # numbered, like a notebook cell

    return go


def torch_state():
    import torch._inductor.config as config

    logger = logging.getLogger("torch.__trace")
    return (
        list(logger.handlers),
        logger.level,
        config.force_disable_caches,
        config.trace.provenance_tracking_level,
        config.custom_partitioner_fn,
    )
