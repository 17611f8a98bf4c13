"""Autotune records: what Inductor's autotuner benchmarked, heard from its log records, kept as data."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import compilescope
from compilescope.live.compiled_code.autotune_log import (
    LOGGER,
    hearing_autotune,
    with_autotune_records,
)


class _Config:
    """Stands in for triton.Config: what the autotuner's records print."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _autotune(log: logging.Logger, name: str, configs: list[tuple[str, float]], best: str) -> None:
    # The calls CachingAutotuner.benchmark_all_configs and autotune_to_one_config make
    # (torch/_inductor/runtime/triton_heuristics.py), with the same formats and arguments.
    objs = {text: _Config(text) for text, _ in configs}
    log.debug("Benchmark all input configs for %s, get:", name)
    for text, ms in configs:
        log.debug("%s: %f, nreg %d, nspill %d, #shared-mem %s", objs[text], ms, 32, 0, 0)
    log.debug("Best config for %s: %s: %f, nreg %d, nspill %d, #shared-mem %s", name, objs[best], dict(configs)[best], 32, 0, 0)  # fmt: skip


def test_records_are_heard_and_the_logger_is_left_as_it_was(loaded):
    log = logging.getLogger(LOGGER)
    before = (log.level, log.propagate, list(log.handlers))
    cap = loaded("module_backward")
    name = next(k.name for c in cap for k in c.kernels if k.language != "extern")
    with hearing_autotune() as records:
        _autotune(log, name, [("XBLOCK: 512, num_warps: 4", 0.128), ("XBLOCK: 256, num_warps: 2", 0.057), ("XBLOCK: 1024, num_warps: 8", float("inf"))], "XBLOCK: 256, num_warps: 2")  # fmt: skip
    assert (log.level, log.propagate, list(log.handlers)) == before
    choices = records.kernels[name]
    assert [c.ms for c in choices] == [0.128, 0.057, None]  # a failed config: no time
    assert [c.chosen for c in choices] == [False, True, False]
    tuned = with_autotune_records(cap, records)
    kernel = next(k for c in tuned for k in c.kernels if k.name == name)
    assert kernel.autotune == tuple(choices)
    # Saved and loaded (and valid JSON for the browser: no Infinity).
    text = tuned.to_json()
    json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    again = compilescope.Capture.from_json(text)
    assert next(k for c in again for k in c.kernels if k.name == name).autotune == tuple(choices)


def test_a_kernel_launched_with_another_config_shows_in_the_diff(loaded):
    cap = loaded("module_backward")
    name = next(k.name for c in cap for k in c.kernels if k.language != "extern")

    def with_launch(block: int):
        compiles = []
        for c in cap:
            codes = tuple(
                replace(code, kernels=tuple(replace(k, launch={"XBLOCK": block, "num_warps": 4}) if k.name == name else k for k in code.kernels))
                for code in c.output_code
            )  # fmt: skip
            compiles.append(replace(c, output_code=codes))
        return replace(cap, compiles=tuple(compiles))

    d = compilescope.diff(with_launch(512), with_launch(256))
    (change,) = [k for k in d.kernels if k.change == "config"]
    assert change.before == "XBLOCK=512, num_warps=4" and change.after == "XBLOCK=256, num_warps=4"
    assert "launched with another config" in d.summary()
    assert not [k for k in compilescope.diff(with_launch(512), with_launch(512)).kernels]
