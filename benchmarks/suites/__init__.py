"""The suites by name: each module has SUITE (name, device, what it measures), run and convert."""

from __future__ import annotations

import importlib
from types import ModuleType

# In the order RESULTS.md shows them. Each module's SUITE is {"name", "device", "measures"};
# run(args, out) -> rows measures now; convert(path, prov, args) -> rows reads a record the
# suite wrote (prov: what the record does not hold itself); RECORDED lists the records that
# today's committed rows come from, as (path under benchmarks/, prov, args).
MODULES = (
    "step_budget",
    "split_cost",
    "verdict_blind",
    "blind_set",
    "ddp_verdict",
    "speed_zoo",
    "first_step",
    "compile_time",
    "compile_blind",
    "report",
    "big_job",
    "big_logs",
    "listen_overhead",
    "capture",
    "layout",
    "paint",
)


def modules() -> dict[str, ModuleType]:
    """Suite name -> its module."""
    loaded = (importlib.import_module(f"suites.{name}") for name in MODULES)
    return {m.SUITE["name"]: m for m in loaded}
