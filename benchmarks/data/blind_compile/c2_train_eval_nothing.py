"""CONTROL. A small CNN trained for a few steps, evaluated on a held-out batch under
model.eval() + torch.no_grad(), then trained again: the standard train/validate loop. The
model is compiled once; the validation pass compiles one more graph (inference: no autograd,
BatchNorm/Dropout in eval mode) and going back to training reuses the first graph. Shapes are
constant, nothing repeats, no options are set.

User complaint: "I see two compilations in my logs, one when validation starts. Is something
wrong with my setup?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Dealing with Recompilations' (https://docs.pytorch.org/docs/stable/compile/"
    "programming_model.recompilation.html: 'Recompilations are necessary for torch.compile "
    "soundness') and 'Where to apply torch.compile?' (compile the train or eval step / the "
    "top-level module); grad mode and module.training are guarded because the train and eval "
    "graphs differ"
)
REMEDY = (
    "Nothing to change: one training graph plus one evaluation graph is the expected minimum "
    "for a train/validate loop (different autograd and BatchNorm/Dropout behaviour); both are "
    "reused afterwards."
)
REMEDY_WORDS = ("nothing",)
EXPECT = "nothing"


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(32, 10),
    )


def run(fresh: bool):
    torch.manual_seed(0)
    model = make_model()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train_x = torch.randn(6, 32, 3, 32, 32)
    train_y = torch.randint(0, 10, (6, 32))
    val_x = torch.randn(2, 32, 3, 32, 32)
    val_y = torch.randint(0, 10, (2, 32))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for epoch in range(2):
            model.train()
            for i in range(3):
                step = epoch * 3 + i
                loss = F.cross_entropy(compiled(train_x[step]), train_y[step])
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
            model.eval()
            correct = 0
            with torch.no_grad():
                for x, y in zip(val_x, val_y, strict=True):
                    correct += (compiled(x).argmax(-1) == y).sum()
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
