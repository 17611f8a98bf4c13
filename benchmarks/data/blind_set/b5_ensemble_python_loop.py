"""Blind-set loop: a deep ensemble trained as a Python loop over its member networks.

The user trains a deep ensemble for uncertainty estimation: 32 identical MLPs
(256 -> 1024 -> 1024 -> 1, random inits) on the same minibatch of 1024 rows,
written the obvious way, ``torch.stack([m(x) for m in self.members])`` over an
``nn.ModuleList``.  ``torch.compile`` unrolls the loop, but the graph still
holds 32 separate small GEMMs per layer (forward and backward) plus their
elementwise kernels: each GEMM (1024 x 1024 x 1024) fills only part of the
H200, and the step issues several hundred kernels.  The remedy follows the
PyTorch model-ensembling tutorial: stack the members' weights with
``torch.func.stack_module_state`` and run one copy of the network under
``torch.vmap`` with ``torch.func.functional_call``, so each layer becomes one
batched matmul over all 32 members.  The stacked weights are the trained
parameters (same initial values, same maths).

The training batch is made once in ``build`` and kept on the device.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/intermediate/ensembling.html"
SOURCE_SAYS = (
    "PyTorch tutorial 'Model ensembling' (torch.func): when the models share one architecture, combine them "
    "with torch.func.stack_module_state and torch.vmap over functional_call instead of running each model "
    "separately in a for-loop; vmap 'eliminates for-loops and speeds them up through vectorization'. (Forum "
    "question with the same loop: https://discuss.pytorch.org/t/efficient-ensemble-training-on-multiple-gpu/"
    "117513.)"
)
REMEDY = (
    "vectorise the ensemble: torch.func.stack_module_state + torch.vmap(functional_call) (one batched matmul "
    "per layer for all members) instead of a Python loop over the member modules"
)
REMEDY_WORDS = (
    "vmap",
    "stack_module_state",
    "functional_call",
    "combine_state_for_ensemble",
    "vectorize the ensemble",
    "vectorise the ensemble",
    "vectorized ensemble",
    "vectorised ensemble",
    "batched ensemble",
    "batch the ensemble",
    "batch the members",
    "stack the weights",
    "stacked weights",
    "stack the parameters",
    "stacked parameters",
    "bmm",
    "baddbmm",
    "batched matmul",
    "batched matrix multiply",
    "batched gemm",
    "grouped gemm",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class Member(nn.Module):
    def __init__(self, d_in: int, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, width)
        self.fc2 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(F.gelu(self.fc2(F.gelu(self.fc1(x))))).squeeze(-1)


class LoopEnsemble(nn.Module):
    """As the user wrote it: one forward per member."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([m(x) for m in self.members])  # (K, B)


class VmapEnsemble(nn.Module):
    """The tutorial's recipe: stacked member weights, one network evaluated under vmap."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        from torch.func import stack_module_state

        params, _ = stack_module_state(members)
        self.names = list(params)
        self.stacked = nn.ParameterList(
            [nn.Parameter(params[n].detach().clone()) for n in self.names]
        )
        # stateless copy of one member, used only for its forward code
        self.__dict__["base"] = copy.deepcopy(members[0]).to("meta")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch.func import functional_call

        def one(ps: tuple[torch.Tensor, ...], xx: torch.Tensor) -> torch.Tensor:
            return functional_call(self.base, dict(zip(self.names, ps, strict=False)), (xx,))

        return torch.vmap(one, in_dims=(0, None))(tuple(self.stacked), x)  # (K, B)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        K, d_in, width, B = 32, 256, 1024, 1024
    else:
        K, d_in, width, B = 3, 16, 32, 8
    members = [Member(d_in, width) for _ in range(K)]
    model = (VmapEnsemble(members) if remedy else LoopEnsemble(members)).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    x = torch.randn(B, d_in, device=dev)
    y = x[:, :4].sum(1) + 0.1 * torch.randn(B, device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            pred = cmodel(x)  # (K, B)
        loss = F.mse_loss(pred.float(), y.expand(K, B))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
