"""Plain-torch timing of c4_crop_views.py: argv[1] in {without, with}.
without: a fixed-size centre crop is taken by slicing training frames of five different
resolutions and the view (strides of the full frame) goes straight to the compiled model:
forward and backward compile, then compile again with dynamic strides after the stride guard
fails. with: the crop is made contiguous before the call, so the model compiles once."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "without"
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


torch.manual_seed(0)
model = QualityNet()
model.compile()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
frames = [torch.randn(BATCH, 3, h, w) for h, w in FRAMES]
labels = torch.randint(0, 5, (len(FRAMES), BATCH))
t = time.perf_counter()
for frame, y in zip(frames, labels, strict=True):
    crop = centre_crop(frame)
    if MODE == "with":
        crop = crop.contiguous()
    loss = F.nll_loss(model(crop).log(), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
