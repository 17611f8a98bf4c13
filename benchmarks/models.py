"""The models the suites build (GPT-2, Llama, ConvNeXt, ResNets, a block, a CNN) and how a capture is trimmed."""

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


def build(name: str, size: str, device: str = "cuda"):
    """(model, step inputs, loss function) for one model, bf16 weights; size tiny, small or full."""
    import torch

    dtype = torch.bfloat16
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        layers, width, batch, seq = {"tiny": (2, 128, 2, 64), "small": (2, 512, 4, 256)}.get(
            size, (4, 768, 8, 512)
        )
        model = GPT2LMHeadModel(
            GPT2Config(n_layer=layers, n_embd=width, n_head=max(width // 64, 2), n_positions=seq)
        )
        ids = torch.randint(0, 50257, (batch, seq), device=device)
        inputs = (ids,)

        def loss_fn(m, ids):
            return m(input_ids=ids, labels=ids).loss
    elif name == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        layers, width, batch, seq = {"tiny": (2, 128, 2, 64), "small": (2, 512, 2, 512)}.get(
            size, (4, 768, 4, 1024)
        )
        config = LlamaConfig(
            hidden_size=width, intermediate_size=width * 8 // 3 // 64 * 64 or 256,
            num_hidden_layers=layers, num_attention_heads=max(width // 64, 2),
            num_key_value_heads=max(width // 64 // 3, 1), vocab_size=32000,
            max_position_embeddings=seq,
        )  # fmt: skip
        model = LlamaForCausalLM(config)
        ids = torch.randint(0, 32000, (batch, seq), device=device)
        inputs = (ids,)

        def loss_fn(m, ids):
            return m(input_ids=ids, labels=ids).loss
    elif name == "resnet":  # a ResNet-style CNN with batch norm that needs no torchvision
        width, blocks, batch, pixels = {"tiny": (32, 2, 16, 32), "small": (64, 4, 16, 64)}.get(
            size, (128, 8, 32, 128)
        )
        model = resnet_style(width, blocks)
        x = torch.randn(batch, 3, pixels, pixels, device=device, dtype=dtype)
        y = torch.randint(0, 10, (batch,), device=device)
        inputs = (x, y)

        def loss_fn(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)
    else:
        import torchvision

        batch, pixels = {"tiny": (4, 64), "small": (8, 112)}.get(size, (32, 224))
        model = torchvision.models.convnext_tiny()
        x = torch.randn(batch, 3, pixels, pixels, device=device, dtype=dtype)
        y = torch.randint(0, 1000, (batch,), device=device)
        inputs = (x, y)

        def loss_fn(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)

    return model.to(device=device, dtype=dtype), inputs, loss_fn


def resnet_style(width: int, blocks: int):
    """Conv stem, `blocks` residual blocks (conv, batch norm, ReLU twice), pooled linear head."""
    import torch

    class Residual(torch.nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c), torch.nn.ReLU(),
                torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c),
            )  # fmt: skip

        def forward(self, x):
            return torch.relu(x + self.body(x))

    return torch.nn.Sequential(
        torch.nn.Conv2d(3, width, 3, padding=1), torch.nn.ReLU(),
        *(Residual(width) for _ in range(blocks)),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(width, 10),
    )  # fmt: skip


def gpt2(layers: int, width: int, positions: int, dev: str):
    """A GPT-2 LM built from a config, in bf16 on `dev`."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=layers, n_embd=width, n_head=width // 64, n_positions=positions)
    return GPT2LMHeadModel(config).to(dev, dtype=torch.bfloat16)


def resnet18_sgd(dev: str, **flags):
    """A torchvision ResNet-18 (10 classes) on `dev`, SGD with momentum and `flags`, and a batch
    of 16 images at 64 px with labels: (model, optimizer, x, y)."""
    import torch
    import torchvision

    model = torchvision.models.resnet18(num_classes=10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, **flags)
    x = torch.randn(16, 3, 64, 64, device=dev)
    y = torch.randint(0, 10, (16,), device=dev)
    return model, opt, x, y
