"""CONTROL. 4-fold cross-validation of a small MLP regressor. For each fold the script builds a
fresh model, calls model.compile() on it and trains a few steps. It looks wasteful ("a new
compile per fold"), but the compiled code is cached on the forward's code object and, with
nn.Module inlining, guarded on the module's type and structure rather than on the instance, so
the second to fourth folds reuse the first fold's graph: one compile for the whole run. Shapes
and dtypes are fixed; there are no Python scalars, flags or hooks that change.

User complaint: "should I restructure my cross-validation so that the model is compiled only
once? Is compile time being wasted per fold?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "docs 'Dealing with Recompilations' (recompiles only happen on guard failures; "
    "TORCH_LOGS=recompiles shows none here); pytorch/torchtitan issue #479 / docs on "
    "torch._dynamo.config.inline_inbuilt_nn_modules (instances of the same module class share "
    "one compiled graph); docs 'Where to apply torch.compile?'"
)
REMEDY = "Nothing to change: every fold reuses the one compiled graph; compile time is paid once."
REMEDY_WORDS = ("nothing",)
EXPECT = "nothing"
WRONG_WORDS = ("compile once", "reuse the model", "outside the loop", "load_state_dict")

FOLDS, STEPS, D_IN, H, B = 4, 3, 32, 128, 64


def build():
    return nn.Sequential(nn.Linear(D_IN, H), nn.GELU(), nn.Linear(H, H), nn.GELU(), nn.Linear(H, 1))


def run(fresh: bool):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    folds = [
        [(torch.randn(B, D_IN, generator=g), torch.randn(B, 1, generator=g)) for _ in range(STEPS)]
        for _ in range(FOLDS)
    ]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for fold in folds:
            model = build()
            model.compile()
            opt = torch.optim.SGD(model.parameters(), lr=1e-2)
            for x, y in fold:
                F.mse_loss(model(x), y).backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
