"""A CIFAR-style CNN trained on fixed 32x32 images with a constant batch size (the loader uses
drop_last=True), compiled with dynamic=True "so it never has to recompile".

User complaint: "compiling this small CNN takes much longer than I expected before the first
training step; the shapes never change."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #118492 '`torch.compile(dynamic=True)` compiles forever' "
    "(https://github.com/pytorch/pytorch/issues/118492; dynamic=False compiled in ~90 s), "
    "issue #103587 (ezyang: 'Instead of dynamic=True could you please try "
    "torch._dynamo.config.automatic_dynamic_shapes'), issue #180467 ('torch.compile(dynamic=True) "
    "forces all sizes dynamic which is not recommended'), and the torch.compile API doc for "
    "dynamic=None (default: only compile a more dynamic kernel after dynamism is observed)"
)
REMEDY = (
    "Drop dynamic=True: with static shapes use the default dynamic=None (automatic dynamic "
    "shapes only after a size actually changes) or dynamic=False, so Inductor compiles "
    "specialized static kernels instead of fully symbolic ones."
)
REMEDY_WORDS = (
    "dynamic=none",
    "dynamic=false",
    "remove dynamic=true",
    "drop dynamic=true",
    "without dynamic=true",
    "automatic dynamic",
    "default dynamic",
)
# marking dimensions dynamic is the opposite of what helps here (every shape is static)
WRONG_WORDS = ("mark_dynamic",)
EXPECT = "remedy"


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


def make_model():
    return nn.Sequential(
        cbr(3, 16),
        cbr(16, 32, 2),
        cbr(32, 32),
        cbr(32, 64, 2),
        cbr(64, 64, k=1),
        cbr(64, 96, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(96, 10),
    )


def run(fresh: bool):
    torch.manual_seed(0)
    model = make_model()
    compiled = torch.compile(model, dynamic=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    xs = torch.randn(4, 16, 3, 32, 32)
    ys = torch.randint(0, 10, (4, 16))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(4):
            loss = F.cross_entropy(compiled(xs[step]), ys[step])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
