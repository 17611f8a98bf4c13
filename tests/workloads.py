"""Small torch.compile workloads shared by the fixture recorder, the fidelity check and benchmarks."""

from __future__ import annotations

import torch


class TinyMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def plain_function() -> None:
    def f(x, y):
        return (x.sin() + y).cos().sum()

    torch.compile(f)(torch.randn(8, 8), torch.randn(8, 8))


def module_backward() -> None:
    torch.manual_seed(0)
    model = torch.compile(TinyMLP())
    model(torch.randn(4, 16)).sum().backward()


def graph_break() -> None:
    def f(x):
        y = x.relu() * 2
        print("a print breaks the graph")
        return y.tanh()

    torch.compile(f)(torch.randn(8))


def recompile() -> None:
    def f(x):
        return x.exp() + 1

    compiled = torch.compile(f, dynamic=False)
    compiled(torch.randn(4))
    compiled(torch.randn(6))


def dynamic_shapes() -> None:
    def f(x):
        return x.view(-1, 2).sum(dim=1) * x.shape[0]

    compiled = torch.compile(f, dynamic=True)
    compiled(torch.randn(8))
    compiled(torch.randn(12))


def inference() -> None:
    model = torch.compile(TinyMLP())
    with torch.no_grad():
        model(torch.randn(4, 16))


def compiled_autograd() -> None:
    torch.manual_seed(0)
    model = TinyMLP()
    x = torch.randn(4, 16)
    compiled = torch.compile(model)
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="aot_eager")):
        compiled(x).sum().backward()


def gpt2() -> None:
    """A 2-layer GPT-2 from a config (random weights, no download), forward and backward."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config)
    ids = torch.randint(0, 256, (2, 32))
    out = torch.compile(model)(input_ids=ids, labels=ids)
    out.loss.backward()


WORKLOADS = {
    "plain_function": plain_function,
    "module_backward": module_backward,
    "graph_break": graph_break,
    "recompile": recompile,
    "dynamic_shapes": dynamic_shapes,
    "inference": inference,
    "compiled_autograd": compiled_autograd,
    "gpt2": gpt2,
}


# Added after the fixtures were recorded: classes above keep their line numbers.
class MLPBlock(torch.nn.Module):
    """A matmul, a chain of cheap elementwise ops and a layer norm, another matmul."""

    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(32, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.down = torch.nn.Linear(64, 32)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.down(self.norm(h * torch.sigmoid(h)))


class ConvBN(torch.nn.Module):
    """A convolution with batch norm, then a linear head (the partition lab's CNN)."""

    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, channels, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(channels)
        self.head = torch.nn.Linear(channels, 4)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


def _compiled_optimizer_step(
    optimizer: type = torch.optim.Adam, steps: int = 3, warm_up: bool = False, **options: object
) -> None:
    """`steps` training steps of an eager model with the optimizer's step compiled, as torch's
    "compiling the optimizer" tutorial does (`torch.compile(opt.step)`); `warm_up`: a LambdaLR
    that raises the rate over 5 steps, stepped after each optimizer step."""
    torch.manual_seed(0)
    model = TinyMLP()
    opt = optimizer(model.parameters(), **options)
    schedule = None
    if warm_up:
        schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))
    step = torch.compile(opt.step)
    for _ in range(steps):
        model(torch.randn(4, 16)).sum().backward()
        step()
        if schedule is not None:
            schedule.step()
        opt.zero_grad()


def compiled_foreach_step() -> None:
    """A foreach Adam's step compiled: torch breaks the graph in it on purpose (`_use_grad`)."""
    _compiled_optimizer_step(lr=1e-3, foreach=True)


def compiled_fused_step() -> None:
    """A fused Adam's step compiled: torch never traces the fused kernel; the step runs eagerly."""
    _compiled_optimizer_step(lr=1e-3, fused=True)


def compiled_momentum_step() -> None:
    """A foreach SGD with momentum, its step compiled: torch.optim makes the momentum buffers at
    the first step, so the step compiles without them and again with them."""
    _compiled_optimizer_step(torch.optim.SGD, lr=1e-2, momentum=0.9, foreach=True)


def compiled_fused_momentum_step() -> None:
    """A fused SGD with momentum, its step compiled: it runs eagerly, and torch.optim's own
    frames around the fused update recompile once the momentum buffers exist."""
    _compiled_optimizer_step(torch.optim.SGD, lr=1e-2, momentum=0.9, fused=True)


def compiled_step_lr_schedule() -> None:
    """An AdamW with a warm-up LR scheduler, its step compiled: the scheduler changes the rate
    the compiled step holds as a constant (a recompile), and wraps the step in a function of a
    file Dynamo skips (torch's own break)."""
    _compiled_optimizer_step(torch.optim.AdamW, steps=4, warm_up=True, lr=1e-3)


WORKLOADS["compiled_foreach_step"] = compiled_foreach_step
WORKLOADS["compiled_fused_step"] = compiled_fused_step
WORKLOADS["compiled_momentum_step"] = compiled_momentum_step
WORKLOADS["compiled_fused_momentum_step"] = compiled_fused_momentum_step
WORKLOADS["compiled_step_lr_schedule"] = compiled_step_lr_schedule


def compiled_step_lr_limit() -> None:
    """The LR-scheduled compiled step with a recompile limit of 1: the recompile for the new
    rate hits the limit, as torch 2.11 on a GPU does after 8 (the step then runs eagerly)."""
    with torch._dynamo.config.patch(recompile_limit=1):
        compiled_step_lr_schedule()


WORKLOADS["compiled_step_lr_limit"] = compiled_step_lr_limit


class Block(torch.nn.Module):
    """A residual block as torchvision's ResNet writes it (conv, norm, relu, conv, norm, add)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.relu = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        return self.relu(out)


class SmallResNet(torch.nn.Module):
    """A ResNet's shape at toy size: a stem, two residual blocks, pooling, a linear head."""

    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.relu = torch.nn.ReLU()
        self.maxpool = torch.nn.MaxPool2d(2)
        self.layer1 = torch.nn.Sequential(Block(channels), Block(channels))
        self.fc = torch.nn.Linear(channels, 4)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def small_resnet() -> None:
    """A training step of SmallResNet compiled, as a plain log has it (no module stacks in the
    AOTAutograd graphs: the explorer infers them)."""
    torch.manual_seed(0)
    model = torch.compile(SmallResNet())
    model(torch.randn(2, 3, 8, 8)).sum().backward()


WORKLOADS["small_resnet"] = small_resnet
