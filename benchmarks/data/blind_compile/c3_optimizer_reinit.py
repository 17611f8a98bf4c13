"""A tabular residual MLP trained with one torch.compile'd train step (forward, backward and
the AdamW step in one function, as 'Where to apply torch.compile?' suggests), with the
optimizer passed in as an argument. The training script builds a fresh AdamW at the start of
every epoch ('restart the optimizer each epoch'), so each epoch hands the compiled step a new
optimizer object whose guards fail, and the step is traced and compiled again.

User complaint: "every epoch starts with a multi-second stall, and TORCH_LOGS=recompiles shows
train_step recompiling at each epoch boundary although the batches look the same."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #120814 'torch.compile() and optimizer bits' (maintainer mlazos: "
    "'the optimizer should not be reinitialized on each iteration'); recipe '(beta) "
    "Compiling the optimizer with torch.compile' (https://docs.pytorch.org/tutorials/recipes/"
    "compiling_optimizer.html: build the optimizer once, compile its step once); docs 'Where "
    "to apply torch.compile?' (compile the train step with the optimizer, without the loop)"
)
REMEDY = (
    "Create the optimizer once, outside the epoch loop, and keep passing the same object to "
    "the compiled train step; the step then compiles once (twice counting the first step's "
    "state initialisation) instead of again at every epoch."
)
REMEDY_WORDS = (
    "optimizer once",
    "create the optimizer outside",
    "outside the epoch loop",
    "outside the loop",
    "reuse the optimizer",
    "reuse one optimizer",
    "same optimizer",
    "re-creating the optimizer",
    "recreating the optimizer",
    "re-create the optimizer",
    "recreate the optimizer",
    "new optimizer",
)
EXPECT = "remedy"

EPOCHS, STEPS, N_FEAT, N_CLS, BATCH = 4, 3, 48, 6, 128


class ResMLP(nn.Module):
    def __init__(self, d=N_FEAT, h=192, n_cls=N_CLS):
        super().__init__()
        self.inp = nn.Linear(d, h)
        self.b1 = nn.Sequential(
            nn.LayerNorm(h), nn.Linear(h, 2 * h), nn.GELU(), nn.Linear(2 * h, h)
        )
        self.b2 = nn.Sequential(
            nn.LayerNorm(h), nn.Linear(h, 2 * h), nn.GELU(), nn.Linear(2 * h, h)
        )
        self.out = nn.Linear(h, n_cls)

    def forward(self, x):
        x = self.inp(x)
        x = x + self.b1(x)
        x = x + self.b2(x)
        return self.out(x)


@torch.compile
def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def run(fresh: bool):
    torch.manual_seed(0)
    model = ResMLP()
    xs = torch.randn(EPOCHS, STEPS, BATCH, N_FEAT)
    ys = torch.randint(0, N_CLS, (EPOCHS, STEPS, BATCH))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for epoch in range(EPOCHS):
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)  # fresh optimizer each epoch
            for i in range(STEPS):
                train_step(model, opt, xs[epoch, i], ys[epoch, i])
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
