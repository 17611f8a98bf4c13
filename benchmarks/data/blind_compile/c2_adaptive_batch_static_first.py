"""An image-scoring service with adaptive batching: each forward pass gets however many
requests arrived in the batching window (2 to 8 images of 64x64). The model is compiled with
the default settings.

User complaint: "the first batch compiles for a long time, and then the second batch compiles
for a long time again; after that it is fine. Can I get rid of the second compile?"
"""

import compilescope
import torch
import torch.nn as nn

SOURCE = (
    "PyTorch docs 'Reducing Compile Time' - 'Use dynamic shapes to avoid shape-driven "
    "recompiles' (programming_model.reducing_compile_time: 'The default option, dynamic=None, "
    "will only attempt dynamic shapes after the first compilation ... To keep a specific "
    "dimension dynamic from the first compile, annotate it explicitly with mark_dynamic') and "
    "torch.compiler.set_stance docs ('eager_then_compile': 'beneficial for dynamic shapes as it "
    "allows inferring dynamism from the first two invocations instead of wasting a static "
    "compile on the first invocation', https://docs.pytorch.org/docs/stable/generated/"
    "torch.compiler.set_stance.html)"
)
REMEDY = (
    "Tell the compiler up front that the batch dimension varies: "
    "torch._dynamo.mark_dynamic(batch, 0) on the input before the first call (or "
    "torch.compiler.set_stance('eager_then_compile')), so the first compile is already the "
    "dynamic one and the wasted static compile of the first batch size disappears."
)
REMEDY_WORDS = ("mark_dynamic", "eager_then_compile")
# measured: dynamic=True compiles one graph but it is as slow as the static + dynamic pair here
WRONG_WORDS = ("dynamic=true",)
EXPECT = "remedy"

BATCH_SIZES = (6, 3, 8, 5, 2, 7, 4, 6)


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


def make_model():
    return nn.Sequential(
        cbr(3, 16),
        cbr(16, 24, 2),
        cbr(24, 24),
        cbr(24, 48, 2),
        cbr(48, 48, k=1),
        cbr(48, 48),
        cbr(48, 96, 2),
        cbr(96, 96, k=1),
        cbr(96, 160, 2),
        nn.Conv2d(160, 192, 1),
        nn.SiLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(192, 20),
    )


def run(fresh: bool):
    torch.manual_seed(0)
    model = make_model().eval()
    compiled = torch.compile(model)
    batches = [torch.randn(n, 3, 64, 64) for n in BATCH_SIZES]
    with torch.no_grad():
        with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
            for batch in batches:
                scores = torch.sigmoid(compiled(batch))
                (scores > 0.5).sum()
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
