"""A training loop with attention written by hand, run under capturing() in a fresh process;
prints its findings as JSON (tests/live/test_findings_live.py reads them)."""

from __future__ import annotations

import json

import compilescope
import torch


class HandAttention(torch.nn.Module):
    """One causal self-attention layer written by hand, as many codebases do (issue 42)."""

    def __init__(self, width: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
        weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(b, t, c)).pow(2).mean()


def main() -> None:
    torch.manual_seed(0)
    model = HandAttention()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    x = torch.randn(4, 256, 64)  # attention is most of the step, also on a busy machine
    with compilescope.capturing(eager_steps=0) as cap:
        for _ in range(16):
            step(x).backward()
            opt.step()
            opt.zero_grad()
    capture = cap.capture
    real = capture.timings.real_steps
    graph = capture.compiles[0].graph("dynamo_output_graph") if capture.compiles else None
    found = [
        {
            "kind": f.kind,
            "what": f.what,
            "share": f.cost.share,
            "file": f.user.file if f.user else None,
            "line": f.user.line if f.user else None,
            "fix": f.fix.change if f.fix else "",
        }
        for f in compilescope.findings(capture)
    ]
    print(json.dumps({
        "found": found,
        "why": capture.timings.real_steps_note if real is None else real.note,
        "ran": sorted({f"{k.compile_id} {k.kernel}" for k in real.kernels}) if real else [],
        "targets": [n.target for n in graph.nodes] if graph is not None else None,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
