"""Cells run through the real IPython shell (`ip`, tests/conftest.py); torch's state to compare."""

from __future__ import annotations

import logging

import pytest


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
