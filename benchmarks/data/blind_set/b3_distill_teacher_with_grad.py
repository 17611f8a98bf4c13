"""Blind-set loop: knowledge distillation with the frozen teacher's forward run with autograd on.

The teacher network only provides soft targets, but the user calls
``teacher(x)`` without ``torch.no_grad()`` and without freezing its parameters.
Autograd therefore records the whole teacher forward, the compiled teacher runs
its *training* graph (saving activations for backward), and ``loss.backward()``
back-propagates through the teacher as well, computing (and accumulating,
forever, since only the student's optimizer zeroes its grads) gradients for
every teacher parameter that nobody uses.  The teacher is several times larger
than the student, so most of each step is wasted teacher backward.  The remedy
runs the teacher under ``torch.no_grad()`` (as the distillation tutorial does),
so only its forward runs, as an inference graph.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/beginner/knowledge_distillation_tutorial.html"
SOURCE_SAYS = (
    "PyTorch knowledge-distillation tutorial: the teacher forward is wrapped in 'with torch.no_grad():' "
    "('do not save gradients here as we do not change the teacher's weights'); the Performance Tuning Guide "
    "('Disable gradient calculation for validation or inference') adds that torch.no_grad() avoids saving "
    "intermediate buffers for a forward whose gradients are not needed, which accelerates execution and "
    "reduces memory."
)
REMEDY = "run the teacher forward under torch.no_grad() (or freeze it with requires_grad_(False) / inference_mode)"
REMEDY_WORDS = (
    "no_grad",
    "no grad",
    "inference_mode",
    "inference mode",
    "requires_grad_(false)",
    "requires_grad=false",
    "requires_grad = false",
    "freeze the teacher",
    "frozen teacher",
    "detach",
)


def _cnn(widths: list[int], n_cls: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    c_in = 3
    for i, w in enumerate(widths):
        layers += [
            nn.Conv2d(c_in, w, 3, padding=1, bias=False),
            nn.BatchNorm2d(w),
            nn.ReLU(inplace=True),
        ]
        if i % 2 == 1:
            layers.append(nn.MaxPool2d(2))
        c_in = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, n_cls)]
    return nn.Sequential(*layers)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, hw, n_cls = 256, 32, 100
        t_w, s_w = [128, 128, 256, 256, 512, 512], [32, 64, 128]
    else:
        B, hw, n_cls = 4, 8, 10
        t_w, s_w = [16, 16, 32, 32], [8, 16]
    teacher = _cnn(t_w, n_cls).to(dev).eval()  # "pretrained" teacher (random weights here)
    student = _cnn(s_w, n_cls).to(dev)
    cteacher = torch.compile(teacher)
    cstudent = torch.compile(student)
    opt = torch.optim.AdamW(
        student.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True
    )
    x = torch.randn(B, 3, hw, hw, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)
    T, alpha = 4.0, 0.5

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            if remedy:
                with torch.no_grad():
                    t_logits = cteacher(x)
            else:
                t_logits = cteacher(
                    x
                )  # autograd on: teacher activations saved, teacher backward runs
            s_logits = cstudent(x)
        soft = F.kl_div(
            F.log_softmax(s_logits.float() / T, dim=1),
            F.softmax(t_logits.float() / T, dim=1),
            reduction="batchmean",
        ) * (T * T)
        loss = alpha * soft + (1 - alpha) * F.cross_entropy(s_logits.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
