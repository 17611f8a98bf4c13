"""Every Python block of the README runs as written, in a real IPython shell (issue 44).

The README's snippets name a model, a batch, a loop's data and a step: the context below
defines them, small, as a user's notebook would. Paths the README writes to or reads from
(/tmp/tracedir, /shared/captures) are folders of this test: a DDP job's two rank logs and an
empty folder. The blocks run in the README's order. Slow for the magic tier (three CPU
compiles and a timed loop): it is what a new user types first.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

CONTEXT = """
import torch, compilescope
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
x = torch.randn(8, 16)
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = [torch.randn(8, 16) for _ in range(30)]
def loss_fn(y):
    return y.pow(2).mean()
def train_step():
    loss_fn(compiled(x)).backward()
    opt.step()
    opt.zero_grad()
# "two captures of your loop, before and after a change" (the diff's line)
with compilescope.capturing() as before:
    for batch in data:
        train_step()
opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
with compilescope.capturing() as after:
    for batch in data:
        train_step()
"""


def readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_every_python_block_of_the_readme_runs(ip, tmp_path, monkeypatch):
    blocks = readme_blocks()
    assert len(blocks) >= 4, "the README's Python blocks moved: update this test's order"
    tracedir, captures = tmp_path / "tracedir", tmp_path / "captures"
    shutil.copytree(FIXTURES / "ranks_ddp", tracedir)
    captures.mkdir()
    monkeypatch.chdir(tmp_path)  # files the snippets write (report.html, sweep.png) land here

    def runnable(block: str) -> str:
        return block.replace("/tmp/tracedir", str(tracedir)).replace(
            "/shared/captures", str(captures)
        )

    result = ip.run_cell(CONTEXT)
    assert result.success, result.error_in_exec
    for i in range(len(blocks)):  # in the README's order, as a reader types them
        result = ip.run_cell(runnable(blocks[i]))
        error = result.error_in_exec or result.error_before_exec
        assert result.success, f"README python block {i} failed: {error!r}\n{blocks[i]}"
    assert (tmp_path / "report.html").stat().st_size > 0
    # The findings block tried a fix that is a setting: the demo cell's findings have one.
    assert "trial" in ip.user_ns and ip.user_ns["trial"] is not None
