"""Blind-set loop: an LSTM written as a Python loop over ``nn.LSTMCell`` time steps.

A sequence tagger (embedding -> one-layer LSTM -> per-step linear head) whose
recurrent layer the user wrote by hand, "to be able to change it later": a
``for t in range(T)`` loop calling ``nn.LSTMCell`` on one time step at a time.
``torch.compile`` unrolls the loop, so every step becomes its own pair of small
GEMMs (input and recurrent projection of a 64-row batch) plus a fused gate
kernel, and the backward pass another four small GEMMs per step: several
hundred kernels per training step (T=32) that each use a sliver of the GPU.  The
remedy is ``nn.LSTM`` (same parameters and math), which runs the whole sequence
in cuDNN's fused RNN kernels: one big GEMM for the input projections of all time
steps and a persistent recurrent kernel.  (Dynamo deliberately leaves RNN modules
to eager mode, so the cuDNN call sits between two compiled graphs.)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://discuss.pytorch.org/t/why-my-manual-gru-is-slower-than-nn-gru/86461"
SOURCE_SAYS = (
    "PyTorch forum thread 'Why my \"manual\" GRU is slower than nn.GRU?': a recurrent layer built from nn.Linear "
    "blocks and a Python loop over the time steps is painfully slow on the GPU while nn.GRU is fast, because "
    "the built-in RNN modules run the whole sequence in cuDNN's fused kernels; use nn.GRU / nn.LSTM instead of a "
    "per-step cell loop (same report for GRUCell loops: https://github.com/dr-costas/SEDLM/issues/1; NVIDIA: "
    "https://developer.nvidia.com/blog/optimizing-recurrent-neural-networks-cudnn-5/)."
)
REMEDY = "replace the per-time-step nn.LSTMCell Python loop with nn.LSTM (cuDNN fused RNN over the whole sequence)"
REMEDY_WORDS = (
    # "nn.lstm" alone would also match "nn.lstmcell" (the problem), hence the explicit endings
    "nn.lstm(",
    "nn.lstm ",
    "nn.lstm,",
    "nn.lstm.",
    "nn.lstm`",
    "nn.lstm)",
    "nn.lstm module",
    "cudnn lstm",
    "cudnn rnn",
    "cudnn's rnn",
    "cudnn's lstm",
    "fused lstm",
    "fused rnn",
    "built-in lstm",
    "builtin lstm",
)


class CellLoopLSTM(nn.Module):
    """The user's hand-written recurrent layer: nn.LSTMCell applied step by step."""

    def __init__(self, d_in: int, d_h: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(d_in, d_h)
        self.d_h = d_h

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, T, d_in)
        B, T, _ = x.shape
        h = x.new_zeros(B, self.d_h)
        c = x.new_zeros(B, self.d_h)
        outs = []
        for t in range(T):
            h, c = self.cell(x[:, t], (h, c))
            outs.append(h)
        return torch.stack(outs, dim=1)


class FusedLSTM(nn.Module):
    def __init__(self, d_in: int, d_h: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(d_in, d_h, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return out


class Tagger(nn.Module):
    def __init__(self, vocab: int, d_emb: int, d_h: int, n_tags: int, fused: bool) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, d_emb)
        self.rnn = FusedLSTM(d_emb, d_h) if fused else CellLoopLSTM(d_emb, d_h)
        self.head = nn.Linear(d_h, n_tags)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(self.emb(tokens)))


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, T, vocab, d_emb, d_h, n_tags = 64, 32, 20000, 512, 1024, 32
    else:
        B, T, vocab, d_emb, d_h, n_tags = 2, 6, 100, 16, 32, 5
    model = Tagger(vocab, d_emb, d_h, n_tags, fused=remedy).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    tokens = torch.randint(0, vocab, (B, T), device=dev)
    tags = torch.randint(0, n_tags, (B, T), device=dev)

    def step() -> None:
        logits = cmodel(tokens)  # fp32 (cuDNN's RNN may use TF32, its default)
        loss = F.cross_entropy(logits.reshape(-1, n_tags), tags.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
