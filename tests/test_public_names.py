"""The tutorials and the README use only compilescope's public names (issue 44)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The package's inner layers: what a user types stays above them (`compilescope.x`).
PRIVATE = re.compile(r"\bcompilescope\.(model|live|views|trace|common|cell|magic|report_job)\b")


def _code_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text("utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                blocks.append((f"{path.name} cell {i}", "".join(cell["source"])))
    readme = (ROOT / "README.md").read_text("utf-8")
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", readme, re.S)):
        blocks.append((f"README.md python block {i}", block))
    return blocks


def test_there_are_code_blocks_to_check() -> None:
    names = {name.split(" ")[0] for name, _ in _code_blocks()}
    assert "README.md" in names and "10_make_it_faster.ipynb" in names


def test_tutorials_and_readme_use_only_public_names() -> None:
    used = [
        f"{name}: {line.strip()}"
        for name, code in _code_blocks()
        for line in code.splitlines()
        if PRIVATE.search(line)
    ]
    assert used == []


def test_the_check_sees_a_private_import() -> None:
    assert PRIVATE.search("from compilescope.model.summary import real_steps_lines")
    assert not PRIVATE.search("compilescope.findings(cap)[:3]")
