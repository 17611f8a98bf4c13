"""Twin of the control c5_kfold_new_model_nothing: a new model instance per fold.

without: each fold builds a new model and calls model.compile() on it (as the control does).
with:    one model compiled once; each fold loads the fresh weights into it.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

FOLDS, STEPS = 4, 3


def build():
    return nn.Sequential(
        nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 1)
    )


def main(mode):
    torch.manual_seed(0)
    x = torch.randn(64, 32)
    y = torch.randn(64, 1)
    shared = build()
    if mode == "with":
        shared.compile()
    t = time.perf_counter()
    for _f in range(FOLDS):
        model = build()
        if mode == "with":
            shared.load_state_dict(model.state_dict())
            model = shared
        else:
            model.compile()
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        for _s in range(STEPS):
            F.mse_loss(model(x), y).backward()
            opt.step()
            opt.zero_grad()
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
