"""Blind-set loop: DataLoader over an in-GPU-memory TensorDataset, fetching one sample at a time.

The user trains an MLP on a tabular data set (32768 rows x 256 features) that
fits easily in GPU memory, so the features and targets were moved to the GPU
once and wrapped in ``TensorDataset(X_gpu, y_gpu)`` behind an ordinary
``DataLoader(ds, batch_size=4096, shuffle=True)`` (``num_workers=0``: CUDA
tensors cannot go to worker processes).  With a ``batch_size`` the DataLoader
asks the sampler for one index at a time and calls ``ds[i]`` for each of the
4096 indices of a batch (``TensorDataset`` has no ``__getitems__``), i.e.
8192 tiny tensor views created in Python, then ``default_collate`` stacks them
back into two batch tensors.  Each batch costs tens of milliseconds of Python,
while the compiled MLP step takes a few.  The remedy is the workaround from
the PyTorch issue: let the sampler yield whole shuffled index batches (here a
``torch.randperm`` on the device, cut into slices) and turn automatic batching
off (``batch_size=None``), so ``TensorDataset`` indexes each tensor once per
batch with a tensor of indices (one gather per tensor, no collate).

Both variants draw the same number of samples per step from the same tensors;
only the way the batch is assembled differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Sampler, TensorDataset

SOURCE = "https://github.com/pytorch/pytorch/issues/4959"
SOURCE_SAYS = (
    "pytorch/pytorch#4959 'Speed up data loading for TensorDataset if the underlying dataset supports index by a "
    "list of indices': the DataLoader fetches and collates samples one by one, which is very slow for tensors "
    "already in memory; the workaround given there is a Sampler that yields whole batches of indices with "
    "DataLoader(batch_size=None, sampler=...), so the TensorDataset is indexed once per batch (see also "
    "https://github.com/pytorch/pytorch/issues/106704, 'Dataloader extremely slow on in-memory datasets')."
)
REMEDY = (
    "index the in-memory tensors once per batch: a sampler that yields shuffled index batches (randperm slices) "
    "with DataLoader(batch_size=None), instead of per-sample __getitem__ plus default_collate"
)
REMEDY_WORDS = (
    "batched indexing",
    "batch indexing",
    "index the whole batch",
    "index a whole batch",
    "index the tensors directly",
    "index the tensor directly",
    "direct indexing",
    "direct tensor indexing",
    "tensor of indices",
    "list of indices",
    "batch of indices",
    "index batches",
    "__getitems__",
    "batch_size=none",
    "randperm",
    "slice the tensors",
    "slicing the tensors",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class TabularMLP(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(d_in, width), nn.SiLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.SiLU()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class ShuffledIndexBatches(Sampler[torch.Tensor]):
    """Yields one shuffled index tensor per batch (the issue's TensorSampler, on the device)."""

    def __init__(self, n: int, batch_size: int, device: torch.device) -> None:
        self.n, self.batch_size, self.device = n, batch_size, device

    def __iter__(self) -> Iterator[torch.Tensor]:
        perm = torch.randperm(self.n, device=self.device)
        yield from perm.split(self.batch_size)

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        N, D, B, width, depth = 32768, 256, 4096, 1024, 4
    else:
        N, D, B, width, depth = 256, 16, 32, 32, 2
    # the whole (already preprocessed) table lives on the device
    X = torch.randn(N, D, device=dev)
    y = (X[:, :8].sum(1) + 0.1 * torch.randn(N, device=dev)).contiguous()
    ds = TensorDataset(X, y)
    if remedy:
        loader = DataLoader(ds, batch_size=None, sampler=ShuffledIndexBatches(N, B, dev))
    else:
        loader = DataLoader(ds, batch_size=B, shuffle=True)

    model = TabularMLP(D, width, depth).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    it = [iter(loader)]

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        try:
            return next(it[0])
        except StopIteration:  # new epoch
            it[0] = iter(loader)
            return next(it[0])

    def step() -> None:
        xb, yb = next_batch()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            pred = cmodel(xb)
        loss = F.mse_loss(pred.float(), yb)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
