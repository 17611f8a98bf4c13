"""Fine-tuning an image-quality classifier with model.compile(). Training batches are frames
from several cameras with different resolutions, and the loop cuts a fixed 112x112 centre
crop with plain slicing (`frame[:, :, y0:y0+112, x0:x0+112]`) and feeds that view straight to
the model. The crop always has the same shape, but as a view its strides are those of the
full frame, which differ per camera: Dynamo guards on input strides, so forward and backward
are compiled for the first camera and compiled again (with dynamic strides) for the second.

User complaint: "the input is always 8x3x112x112, yet TORCH_LOGS=recompiles shows the model
recompiling on a stride guard when the second camera's frames arrive."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #129798 (recompiles on `tensor 'L['x']' stride mismatch` when the "
    "input is a view in one call and not in another); pytorch/pytorch PR #90665 comment "
    "(slicing the input of a compiled net, `x[:, :, :n]`, gave stride guard trouble; 'Adding "
    ".contiguous() fixed this issue'); docs torch.compiler troubleshooting / 'Dealing with "
    "Recompilations' (TORCH_LOGS=recompiles names the failing tensor guard)"
)
REMEDY = (
    "Make the crop contiguous before the compiled call (`crop.contiguous()`, or copy it into "
    "a preallocated buffer / crop in the data pipeline), so every batch has the same "
    "strides and the model compiles once."
)
REMEDY_WORDS = (
    ".contiguous()",
    "contiguous(",
    "make the crop contiguous",
    "make the input contiguous",
    "make inputs contiguous",
    "contiguous copy",
    "copy the crop",
    "same strides",
    "consistent strides",
    "contiguous input",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true",)

CROP, BATCH = 112, 8
FRAMES = ((160, 200), (144, 256), (180, 180), (128, 240), (200, 160))  # per camera (H, W)


def conv_bn(i, o, s=1):
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU())


class QualityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 32, 2),
            conv_bn(32, 32),
            conv_bn(32, 64, 2),
            conv_bn(64, 64),
            conv_bn(64, 128, 2),
            conv_bn(128, 128),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 5))

    def forward(self, x):
        return self.head(self.features(x)).softmax(-1)


def centre_crop(frame):
    H, W = frame.shape[-2:]
    y0, x0 = (H - CROP) // 2, (W - CROP) // 2
    return frame[:, :, y0 : y0 + CROP, x0 : x0 + CROP]  # a view with the frame's strides


def run(fresh: bool):
    torch.manual_seed(0)
    model = QualityNet()
    model.compile()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    frames = [torch.randn(BATCH, 3, h, w) for h, w in FRAMES]
    labels = torch.randint(0, 5, (len(FRAMES), BATCH))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for frame, y in zip(frames, labels, strict=True):
            loss = F.nll_loss(model(centre_crop(frame)).log(), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
