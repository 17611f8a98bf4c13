"""Run notebooks top to bottom in an in-process IPython shell, without Jupyter.

For machines with no Jupyter stack, such as the GPU machine, where the GPU branches of the
tutorials (05, 08) run instead of their recorded fallbacks:

    python tests/notebooks/run_in_ipython.py notebooks/05_inductor.ipynb ...

Each notebook runs in its own process, from its own folder, as Jupyter would run it. Exits
non-zero when a cell fails that is not tagged `raises-exception`, or one so tagged does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def run_one(path: Path) -> int:
    from IPython.core.interactiveshell import InteractiveShell

    os.chdir(path.parent)
    shell = InteractiveShell.instance()
    cells = json.loads(path.read_text())["cells"]
    failures = 0
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        expect_error = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        print(f"----- {path.name} cell {number}: {source.splitlines()[0] if source else ''}")
        result = shell.run_cell(source, store_history=True)
        if result.success == expect_error:
            failures += 1
            print(f"!!!!! {path.name} cell {number}: expected error={expect_error}")
    return failures


def main(paths: list[str]) -> int:
    if paths[:1] == ["--one"]:
        return min(run_one(Path(paths[1]).resolve()), 1)
    status = 0
    for path in paths:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--one", path])
        took = time.perf_counter() - start
        print(f"===== {path}: {'ok' if done.returncode == 0 else 'FAILED'} in {took:.1f} s")
        status |= done.returncode
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
