"""Findings on real models: the top finding of each case, and what applying its fix changed.

    python benchmarks/findings_cases.py [--out benchmarks/findings_results.json] [CASE ...]

Each case is a realistic model (a `transformers` GPT-2 built from a config, hand-written models
of the kinds people write: a masked-token loss, a mixture of experts, a conv net, a transformer
encoder fed sequences of changing length). For each: capture one training step, take the
findings, then capture the same step again with the fix applied (compilescope.try_fix, which
first captures it again without the fix, so that compile times compare like with like) and
record both. A case whose code compilescope cannot run again (a loop of calls under
`capturing()`) applies the fix's settings the way its text says and captures again.
Prints a Markdown table for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import compilescope
import torch
from compilescope.model.findings.ranked import where_text

ROOT = Path(__file__).resolve().parents[1]


def gpt2_logger():
    """transformers' GPT-2 (2 layers, random weights), one training step: its logging call."""
    import transformers

    config = transformers.GPT2Config(
        n_layer=2, n_embd=128, n_head=4, vocab_size=512, n_positions=128
    )
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 512, (4, 64))

    def train_step(ids):
        return model(input_ids=ids, labels=ids).loss

    return compilescope.capture(train_step, ids, timings=True)


class MaskedTokenLoss(torch.nn.Module):
    """A token classifier whose loss averages over real tokens with `.item()` (a common habit)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(1000, 128)
        self.body = torch.nn.Sequential(
            torch.nn.Linear(128, 256), torch.nn.GELU(), torch.nn.Linear(256, 1000)
        )

    def forward(self, ids, mask):
        logits = self.body(self.embed(ids))
        losses = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), ids.flatten(), reduction="none"
        )
        real = mask.sum().item()  # a Python number: a graph break
        return (losses * mask.flatten()).sum() / max(real, 1)


def item_in_loss():
    model = MaskedTokenLoss()
    ids = torch.randint(0, 1000, (8, 64))
    mask = (torch.rand(8, 64) > 0.1).float()
    return compilescope.capture(model, ids, mask, timings=True)


class TopOneMoE(torch.nn.Module):
    """A mixture-of-experts layer with top-1 routing by `nonzero`, as many MoE codes do."""

    def __init__(self, dim: int = 128, experts: int = 4) -> None:
        super().__init__()
        self.router = torch.nn.Linear(dim, experts)
        self.experts = torch.nn.ModuleList(
            torch.nn.Sequential(
                torch.nn.Linear(dim, 2 * dim), torch.nn.SiLU(), torch.nn.Linear(2 * dim, dim)
            )
            for _ in range(experts)
        )

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            rows = torch.nonzero(choice == i).squeeze(-1)
            out = out.index_add(0, rows, expert(x[rows]))
        return out


def moe_nonzero():
    model = TopOneMoE()
    return compilescope.capture(model, torch.randn(256, 128), timings=True)


class SmallConvNet(torch.nn.Module):
    """A ResNet-like conv net: convolutions are library calls Inductor does not generate."""

    def __init__(self) -> None:
        super().__init__()

        def block(i, o):
            return torch.nn.Sequential(
                torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.BatchNorm2d(o), torch.nn.ReLU()
            )

        self.features = torch.nn.Sequential(
            block(3, 32), block(32, 32), torch.nn.MaxPool2d(2), block(32, 64), block(64, 64)
        )
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def conv_fallback():
    model = SmallConvNet()
    return compilescope.capture(model, torch.randn(16, 3, 32, 32), timings=True)


def encoder_layer():
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, dropout=0.0)


def seq_len_recompiles(dynamic: bool | None = None, mark: int | None = None):
    """A transformer encoder layer fed batches of changing sequence length, under capturing().
    `dynamic`, `mark`: the fix as its text says (torch.compile's dynamic=, or mark_dynamic of
    the input's dim `mark`)."""
    layer = encoder_layer()
    compiled = torch.compile(layer, dynamic=dynamic)
    with compilescope.capturing() as cap:
        for length in (16, 24, 32, 40, 48):
            x = torch.randn(4, length, 128)
            if mark is not None:
                torch._dynamo.mark_dynamic(x, mark)
            compiled(x).sum().backward()
    return cap.capture


CASES = {
    "gpt2_logger": gpt2_logger,
    "item_in_loss": item_in_loss,
    "moe_nonzero": moe_nonzero,
    "conv_fallback": conv_fallback,
    "seq_len_recompiles": seq_len_recompiles,
}


def figures(trial) -> dict:
    return {name: {"before": a, "after": b} for name, a, b in trial.rows()}


def run_case(name: str) -> dict:
    torch.manual_seed(0)
    started = time.perf_counter()
    cap = CASES[name]()
    found = compilescope.findings(cap)
    out: dict = {
        "case": name,
        "capture_s": time.perf_counter() - started,
        "findings": [{"kind": f.kind, "what": f.what, "score": f.score} for f in found[:5]],
    }
    if not found:
        return out
    top = found[0]
    # The case is about one cause; where the top finding is another, the one about the case's
    # cause is tried too (its rank is recorded).
    wanted = {"seq_len_recompiles": "recompile"}.get(name)
    target = next((f for f in found if f.kind == wanted), top) if wanted else top
    out["top"] = {"kind": top.kind, "what": top.what, "fix": top.fix.python() if top.fix else ""}
    out["tried"] = {
        "rank": found.index(target) + 1,
        "kind": target.kind,
        "what": target.what,
        "where": where_text(target),
    }
    fix = target.fix
    if fix is None or fix.kind != "setting":
        out["tried"]["fix"] = (fix.change if fix else "") or "no fix to apply"
        return out
    out["tried"]["fix"] = fix.python()
    started = time.perf_counter()
    if name == "seq_len_recompiles":
        # capturing() cannot run the loop again: apply the fix as its text says.
        from compilescope.model.findings.fix_trial import FixTrial

        dynamic = any(s.op == "compile_kwarg" and s.target == "dynamic" for s in fix.settings)
        marks = [s.value for s in fix.settings if s.op == "mark_dynamic"]
        torch._dynamo.reset()
        before = seq_len_recompiles()
        torch._dynamo.reset()
        with compilescope.applying(fix):
            after = seq_len_recompiles(
                dynamic=True if dynamic else None, mark=int(marks[0]) if marks else None
            )
        trial = FixTrial(target, fix, before, after)
    else:
        trial = compilescope.try_fix(cap, target)
    out["trial_s"] = time.perf_counter() - started
    out["error"] = trial.error
    out["figures"] = figures(trial)
    out["after_findings"] = (
        [{"kind": f.kind, "what": f.what} for f in compilescope.findings(trial.after)[:3]]
        if trial.after is not None
        else []
    )
    return out


def markdown(results: list[dict]) -> str:
    lines = [
        "| case | top finding | fix tried (rank) | compile ids | graph breaks | recompiles | compile s | compiled step ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        f = r.get("figures", {})

        def pair(name: str, scale: float = 1.0, digits: int = 0, f: dict = f) -> str:
            v = f.get(name)
            if not v:
                return "-"
            a, b = v["before"], v["after"]
            text = lambda x: "-" if x is None else f"{x * scale:.{digits}f}"  # noqa: E731
            return f"{text(a)} -> {text(b)}"

        tried = r.get("tried", {})
        lines.append(
            f"| {r['case']} | {r.get('top', {}).get('what', 'none')} | `{tried.get('fix', '')}`"
            f" ({tried.get('rank', '-')}) | {pair('compile ids')} | {pair('graph breaks')}"
            f" | {pair('recompiles')} | {pair('compile time (s)', 1, 1)}"
            f" | {pair('compiled step (s)', 1e3, 2)} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", default=list(CASES))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "findings_results.json"))
    args = parser.parse_args()
    results = []
    for name in args.cases:
        print(f"-- {name}", file=sys.stderr, flush=True)
        results.append(run_case(name))
        print(json.dumps(results[-1], indent=1, default=str), file=sys.stderr, flush=True)
    meta = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d"),
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1, default=str))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
