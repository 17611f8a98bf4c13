"""The models the GPU runs capture (a transformer block and a small CNN), and how a capture is
trimmed before it is committed."""

from __future__ import annotations

from dataclasses import replace

import torch


def trimmed(cap):
    """The capture without guards and pre-grad graph texts: what the tests and tutorials need."""
    return replace(
        cap,
        compiles=tuple(
            replace(c, guards="", graphs={k: v for k, v in c.graphs.items() if "pre_grad" not in k})
            for c in cap
        ),
    )


class Block(torch.nn.Module):
    """A transformer block: pre-norm attention and MLP."""

    def __init__(self, d=256, heads=4):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d)
        )

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10),
        )  # fmt: skip

    def forward(self, x):
        return self.body(x)


class BasicBlock(torch.nn.Module):
    """ResNet's basic block: two 3x3 convolutions with batch norm, and a shortcut."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.shortcut = torch.nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet18(torch.nn.Module):
    """ResNet-18 for 224x224 images (torchvision's layout, written out: no torchvision needed)."""

    def __init__(self, classes: int = 1000, width: int = 64) -> None:
        super().__init__()
        w = width
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, w, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(w),
            torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1),
        )  # fmt: skip
        layers, cin = [], w
        for i, cout in enumerate((w, 2 * w, 4 * w, 8 * w)):
            stride = 1 if i == 0 else 2
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout)]
            cin = cout
        self.layers = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))
