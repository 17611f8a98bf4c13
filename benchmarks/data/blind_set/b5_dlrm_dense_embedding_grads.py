"""Blind-set loop: huge recommendation embedding tables trained with dense gradients.

The user trains a DLRM-style click-through-rate model: 8 categorical features,
each looked up in its own ``nn.EmbeddingBag`` table of 4,000,000 rows x 128
(multi-hot bags of 4 ids, ``mode="sum"``; 16 GB of fp32 tables in all), plus a
dense-feature MLP and a top MLP (bf16 autocast).  As in the DLRM reference code,
the tables are trained with plain SGD and the MLPs with (fused) AdamW.  The
tables use the default ``sparse=False``: although a batch of 4096 touches at
most 16,384 of the 4,000,000 rows of a table, every backward materialises a
dense 16 GB gradient (zero-filled, then scattered into), and the SGD step reads
and writes all 16 GB of weights and reads the 16 GB gradient.  The remedy is
``sparse=True`` on the embedding bags: the gradient is a sparse tensor holding
only the looked-up rows, and SGD (which supports sparse gradients) updates only
those rows.  With plain SGD the update is mathematically the same.

Batches (dense features, id bags, click labels) are made once in ``build`` and
kept on the device.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/facebookresearch/dlrm/issues/15"
SOURCE_SAYS = (
    "facebookresearch/dlrm#15 (answer by the DLRM authors): SGD supports sparse updates of the embedding "
    "tables, enabled with nn.EmbeddingBag(n, m, mode='sum', sparse=True); an optimizer without sparse updates "
    "'required the entire embedding to be updated, even though most of the update vectors/elements would have "
    "been zero', making the code less performant and using more memory. The nn.Embedding/EmbeddingBag docs: "
    "sparse=True makes the gradient w.r.t. the weight a sparse tensor (supported by optim.SGD, SparseAdam, "
    "Adagrad)."
)
REMEDY = (
    "nn.EmbeddingBag(..., sparse=True) for the large tables (sparse gradients; SGD then updates only the rows "
    "looked up in the batch)"
)
REMEDY_WORDS = (
    "sparse=true",
    "sparse = true",
    "sparse gradient",
    "sparse gradients",
    "sparse grad",
    "sparse update",
    "sparse updates",
    "sparseadam",
    "sparse embedding",
    "sparse embeddings",
    "only the rows",
    "only the looked-up rows",
    "rows that were looked up",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _mlp(sizes: list[int], last_act: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, n_dense: int, n_tables: int, rows: int, dim: int, sparse: bool) -> None:
        super().__init__()
        self.tables = nn.ModuleList(
            [nn.EmbeddingBag(rows, dim, mode="sum", sparse=sparse) for _ in range(n_tables)]
        )
        self.bottom = _mlp([n_dense, 512, 256, dim], last_act=True)
        n_feat = n_tables + 1
        self.top = _mlp([dim + n_feat * (n_feat - 1) // 2, 1024, 1024, 512, 1], last_act=False)

    def forward(self, dense: torch.Tensor, bags: torch.Tensor) -> torch.Tensor:
        # dense: (B, n_dense); bags: (B, n_tables, bag) int64 ids
        d = self.bottom(dense)
        embs = [t(bags[:, i]) for i, t in enumerate(self.tables)]
        feats = torch.stack([d] + embs, dim=1)  # (B, F, dim)
        inter = torch.bmm(feats, feats.transpose(1, 2))  # pairwise dot products
        iu = torch.triu_indices(feats.size(1), feats.size(1), offset=1, device=feats.device)
        z = torch.cat([d, inter[:, iu[0], iu[1]]], dim=1)
        return self.top(z).squeeze(1)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        n_dense, n_tables, rows, dim, bag, B, n_batches = 13, 8, 4_000_000, 128, 4, 4096, 4
    else:
        n_dense, n_tables, rows, dim, bag, B, n_batches = 13, 3, 1000, 16, 4, 8, 2
    with dev:  # initialise the 16 GB of tables directly on the device
        model = DLRM(n_dense, n_tables, rows, dim, sparse=remedy).train()
    cmodel = torch.compile(model)
    emb_params = [p for t in model.tables for p in t.parameters()]
    mlp_params = list(model.bottom.parameters()) + list(model.top.parameters())
    opt_emb = torch.optim.SGD(emb_params, lr=0.05, foreach=True)  # DLRM: plain SGD for the tables
    opt_mlp = torch.optim.AdamW(mlp_params, lr=1e-3, fused=cuda, foreach=None if cuda else True)
    batches = [
        (
            torch.randn(B, n_dense, device=dev),
            torch.randint(0, rows, (B, n_tables, bag), device=dev),
            torch.randint(0, 2, (B,), device=dev).float(),
        )
        for _ in range(n_batches)
    ]
    it = [0]

    def step() -> None:
        dense, bags, click = batches[it[0] % n_batches]
        it[0] += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logit = cmodel(dense, bags)
        loss = F.binary_cross_entropy_with_logits(logit.float(), click)
        loss.backward()
        opt_emb.step()
        opt_mlp.step()
        opt_emb.zero_grad(set_to_none=True)
        opt_mlp.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
