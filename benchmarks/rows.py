"""The benchmarks' one output format: a row per figure, in JSON lines, with its provenance."""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from importlib import metadata
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
# Every row has every field. `median` is a number, or a text where `unit` is "text" (a
# finding's kind, a rank); `low` and `high` are the spread (min and max of the n values), None
# where n is 1; `note` says anything the figure needs to be read right.
FIELDS = (
    "suite", "case", "metric", "unit", "median", "low", "high", "n",
    "machine", "torch", "triton", "python", "date", "command", "note",
)  # fmt: skip
PROVENANCE = ("machine", "torch", "triton", "python", "date")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _machine(gpu: bool) -> str:
    if gpu:
        import torch

        if torch.cuda.is_available():
            count = torch.cuda.device_count()
            name = torch.cuda.get_device_name()
            return name if count == 1 else f"{count} x {name}"
    return f"{platform.machine()}, {os.cpu_count()} cores"


def here(gpu: bool = False) -> dict:
    """This machine, its versions and today's date: the provenance of a row measured now."""
    return {
        "machine": _machine(gpu),
        "torch": _version("torch"),
        "triton": _version("triton"),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
    }


def command(suite: str, args: list[str]) -> str:
    """The runner's command that reproduces a suite's rows (the suite's options included)."""
    return " ".join(["PYTHONPATH=ext:benchmarks python -m benchmarks run", suite, *args])


def row(suite: str, case: str, metric: str, median, *, unit: str, prov: dict, cmd: str,
        low=None, high=None, n: int = 1, note: str = "") -> dict:  # fmt: skip
    """One figure, with where and how it was measured."""
    return {
        "suite": suite, "case": case, "metric": metric, "unit": unit, "median": median,
        "low": low, "high": high, "n": n, **{k: prov.get(k) for k in PROVENANCE},
        "command": cmd, "note": note,
    }  # fmt: skip


def spread(values: list[float]) -> dict:
    """median, low, high and n of measured values (low and high None for one value)."""
    values = [v for v in values if v is not None]
    if not values:
        return {"median": None, "low": None, "high": None, "n": 0}
    one = len(values) == 1
    return {
        "median": statistics.median(values),
        "low": None if one else min(values),
        "high": None if one else max(values),
        "n": len(values),
    }


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def committed() -> dict[str, list[dict]]:
    """The committed rows, by suite (results/<suite>.jsonl)."""
    return {p.stem: read(p) for p in sorted(RESULTS.glob("*.jsonl"))}


def provenance_for(record: Path, prov: dict) -> dict:
    """What a record does not hold itself: `prov` as given, else the provenance.json that
    `run` wrote beside the record (on the machine that measured it)."""
    beside = record.parent / "provenance.json"
    base = json.loads(beside.read_text()) if beside.exists() else {}
    return {**base, **{k: v for k, v in prov.items() if v}}


def recorded(module) -> list[dict]:
    """A suite's committed rows: the records it lists (RECORDED), converted."""
    bench = RESULTS.parent
    return [r for p, prov, args in module.RECORDED
            for r in module.convert(bench / p, provenance_for(bench / p, prov), args)]  # fmt: skip


def run_script(path: Path, args: list[str]) -> None:
    """Run a suite's script as its own process (its workers start fresh processes of it too)."""
    subprocess.run([sys.executable, str(path), *args], check=True)


def figures(suite: str, record: dict, cmd: str) -> list[dict]:
    """Rows of a figures record: {"provenance", "command"?, "figures": [{"case", "metric",
    "unit", "values": [...]} or, transcribed from a report, {..., "median", "low", "high", "n"}]}."""
    prov = record.get("provenance", {})
    out = []
    for f in record["figures"]:
        values = spread(f["values"]) if "values" in f else {k: f.get(k) for k in ("median", "low", "high", "n")}  # fmt: skip
        out.append(row(suite, f["case"], f["metric"], values.pop("median"), unit=f["unit"],
                       prov=prov, cmd=record.get("command") or cmd, note=f.get("note", ""),
                       **values))  # fmt: skip
    return out


def save_figures(path: Path, found: list[tuple], gpu: bool = False) -> None:
    """Write measured (case, metric, unit, values) as a figures record with this machine's
    provenance; values: the measured values, or a dict of median, low, high and n."""
    record = {"provenance": here(gpu), "figures": [
        {"case": c, "metric": m, "unit": u, **(v if isinstance(v, dict) else {"values": list(v)})}
        for c, m, u, v in found
    ]}  # fmt: skip
    path.write_text(json.dumps(record, indent=1))


def convert_figures(suite: str, path: Path, prov: dict, args: str) -> list[dict]:
    """Rows of a suite whose script writes one figures JSON (`save_figures`), with `prov`
    filling what the record's own provenance lacks."""
    record = json.loads(path.read_text())
    record["provenance"] = {**record.get("provenance", {}), **{k: v for k, v in prov.items() if v}}
    return figures(suite, record, command(suite, args.split()))


def run_figures(script: Path, suite: str, args: list[str], out: Path) -> list[dict]:
    """Run such a suite's script into OUT/figures.json and convert it."""
    run_script(script, [*args, "--json", str(out / "figures.json")])
    return convert_figures(suite, out / "figures.json", {}, " ".join(args))
