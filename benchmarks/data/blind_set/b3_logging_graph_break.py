"""Blind-set loop: a debug ``logger.debug(...)`` call left inside each block's ``forward``.

Every transformer block logs the shape of its input with
``logger.debug("block %d: input shape %s", ...)``.  The logger's level is
WARNING, so nothing is ever printed, but Dynamo cannot trace a
``logging.Logger`` method: each call is a graph break.  The compiled model is
cut into pieces: on torch 2.14 (CPU check) each block's remainder becomes its own
graph, called 12 times per step, and because the break sits inside the
top-level ``for blk in self.blocks`` loop, that frame (embeddings, final norm,
LM head) falls back to eager.  Each piece adds guard checks, an AOTAutograd
runtime wrapper, an autograd node and an unfused boundary, which at this small,
launch-bound size costs a large share of the step.  The
remedy takes the logging out of the compiled region (it is done once, outside
the model); ``torch._dynamo.config.reorderable_logging_functions`` /
``ignore_logging_functions`` are the documented alternatives when the call must stay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html"
SOURCE_SAYS = (
    "torch.compile docs, 'Common Graph Breaks' (logging section): print and logging calls inside a compiled "
    "function cause graph breaks; remove them from the compiled region or register them with "
    "torch._dynamo.config.reorderable_logging_functions (or ignore_logging_functions) so Dynamo moves or skips "
    "them instead of breaking; https://github.com/pytorch/pytorch/issues/132635 reports that logging.Logger "
    "calls graph-break."
)
REMEDY = "remove the logger call from the compiled forward (log outside the compiled region), so the model is one graph"
REMEDY_WORDS = (
    "graph break",
    "graph-break",
    "graphbreak",
    "logger",
    "logging call",
    "reorderable_logging_functions",
    "ignore_logging_functions",
    "ignore_logger_methods",
    "fullgraph",
)

logger = logging.getLogger("b3_logging_graph_break")
logger.setLevel(logging.WARNING)


class Block(nn.Module):
    def __init__(self, idx: int, d: int, n_head: int, log_shapes: bool) -> None:
        super().__init__()
        self.idx = idx
        self.n_head = n_head
        self.log_shapes = log_shapes
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.log_shapes:
            logger.debug("block %d: input shape %s", self.idx, tuple(x.shape))  # graph break
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(
        self, vocab: int, T: int, d: int, n_head: int, n_layer: int, log_shapes: bool
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Block(i, d, n_head, log_shapes) for i in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, T, d, n_head, n_layer, vocab = 32, 128, 256, 4, 12, 4096
    else:
        B, T, d, n_head, n_layer, vocab = 2, 16, 32, 2, 2, 64
    model = TinyLM(vocab, T, d, n_head, n_layer, log_shapes=not remedy).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda, foreach=None if cuda else True)
    idx = torch.randint(0, vocab, (B, T), device=dev)
    tgt = torch.randint(0, vocab, (B, T), device=dev)
    if remedy:
        logger.debug(
            "model input shape %s", tuple(idx.shape)
        )  # logged once, outside the compiled region

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = cmodel(idx)
        loss = F.cross_entropy(logits.float().view(-1, vocab), tgt.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
