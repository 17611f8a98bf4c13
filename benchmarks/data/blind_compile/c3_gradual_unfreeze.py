"""Fine-tuning a (pretend-)pretrained MLP classifier with gradual unfreezing (ULMFiT-style):
all parameters start frozen, and each epoch unfreezes one more stage from the head down by
flipping `requires_grad` on the compiled model's parameters (new parameters are added to the
optimizer with add_param_group). Dynamo guards on each parameter's requires_grad, and the
backward graph differs per stage, so every stage recompiles forward and backward.

User complaint: "each time I unfreeze a layer the next step takes ages; the recompile log
shows requires_grad mismatches. Do I have to pay a full compile per unfreezing stage?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issues #139476 (changing requires_grad of model params under "
    "torch.compile), #141589 ('Can we somehow avoid the recompile on ... requires_grad?') and "
    "#131975 (requires_grad mismatch recompiles); chiahao3/ptyrad issue #13 (to switch "
    "parameters' grads on/off under torch.compile, either recompile at each switch or "
    "'calculate all grads for each params and manually mask them')"
)
REMEDY = (
    "Do not toggle requires_grad on the compiled model: keep requires_grad=True on every "
    "parameter from the start and 'freeze' a stage by leaving its parameters out of the "
    "optimizer (add them with add_param_group when the stage is unfrozen) or by masking / "
    "dropping their gradients; the model then compiles once for the whole schedule."
)
REMEDY_WORDS = (
    "requires_grad=true",
    "keep requires_grad",
    "leave requires_grad",
    "instead of toggling",
    "not toggle",
    "stop toggling",
    "out of the optimizer",
    "from the optimizer",
    "add_param_group",
    "mask the grad",
    "mask their grad",
    "zero the grad",
    "zero their grad",
)
EXPECT = "remedy"

N_FEAT, N_CLS, BATCH, H = 64, 8, 128, 256


def block(i, o):
    return nn.Sequential(nn.Linear(i, o), nn.LayerNorm(o), nn.GELU())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([block(N_FEAT, H), block(H, H), block(H, H)])
        self.head = nn.Linear(H, N_CLS)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def run(fresh: bool):
    torch.manual_seed(0)
    model = Net()  # stands for a pretrained backbone + new head
    compiled = torch.compile(model)
    stages = [model.head, model.blocks[2], model.blocks[1], model.blocks[0]]
    for p in model.parameters():
        p.requires_grad_(False)
    xs = torch.randn(len(stages), 2, BATCH, N_FEAT)
    ys = torch.randint(0, N_CLS, (len(stages), 2, BATCH))
    opt = None
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for epoch, part in enumerate(stages):
            for p in part.parameters():  # unfreeze one more stage
                p.requires_grad_(True)
            if opt is None:
                opt = torch.optim.AdamW(part.parameters(), lr=1e-3)
            else:
                opt.add_param_group({"params": list(part.parameters())})
            for i in range(2):
                loss = F.cross_entropy(compiled(xs[epoch, i]), ys[epoch, i])
                loss.backward()
                opt.step()
                model.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
