"""A tabular classifier trained with a compiled train step (forward, backward, AdamW step and
an ExponentialLR scheduler step inside one torch.compile'd function, as the 'Where to apply
torch.compile' page suggests), with the learning rate given as a plain Python float.

User complaint: "the first step compiles, and then the second step stalls and compiles again
even though nothing about my batches changed."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Dealing with Recompilations' - 'Wrapping Constants with Tensors' "
    "(https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html: "
    "'for LR schedulers, initializing with a constant can lead to recompilations ... wrap "
    "float variables in tensors') and recipe '(beta) Running the compiled optimizer with an LR "
    "Scheduler' (https://docs.pytorch.org/tutorials/recipes/compiling_optimizer_lr_scheduler.html: "
    "'Wrap the lr in a Tensor if we are pairing the compiled optimizer with an LR scheduler')"
)
REMEDY = (
    "Create the optimizer with the learning rate wrapped in a tensor "
    "(AdamW(params, lr=torch.tensor(3e-3)), and a tensor gamma for the scheduler), so the "
    "scheduler's updates change a tensor value instead of a float constant the compiled "
    "optimizer step is guarded on; the optimizer step then compiles once."
)
REMEDY_WORDS = (
    "torch.tensor(",
    "lr in a tensor",
    "lr as a tensor",
    "tensor lr",
    "tensor learning rate",
    "learning rate in a tensor",
    "learning rate as a tensor",
    "wrap the lr",
    "wrap lr",
    "wrap the learning rate",
)
EXPECT = "remedy"

N_FEAT, N_CLS, BATCH = 32, 10, 64


class TabularNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(N_FEAT, 128),
            nn.LayerNorm(128),
            nn.GELU(),
            nn.Linear(128, 128),
            nn.GELU(),
            nn.Dropout(0.1),
            nn.Linear(128, N_CLS),
        )

    def forward(self, x):
        return self.net(x)


def run(fresh: bool):
    torch.manual_seed(0)
    model = TabularNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)

    @torch.compile
    def train_step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss

    xs = torch.randn(8, BATCH, N_FEAT)
    ys = torch.randint(0, N_CLS, (8, BATCH))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(8):
            train_step(xs[step], ys[step])
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
