"""An image classifier whose whole training step is compiled, and the step also updates a
running-metrics object (loss, accuracy, confidence, entropy, calibration error) that calls
.item() and accumulates Python floats, like a typical AverageMeter.

User complaint: "every training step recompiles something; the first three steps take about
a minute on CPU and the step time keeps jumping around."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Working with fullgraph=False' (https://docs.pytorch.org/docs/stable/compile/"
    "programming_model.fullgraph_false.html: 'Apply torch.compiler.disable to functions in the "
    "compiled region that result in a lot of graph breaks and do not benefit from compilation. "
    "In this case, one graph break is better than potentially tens or hundreds.') and "
    "'Disabling and Suppressing Errors' (programming_model.compiler_disable)"
)
REMEDY = (
    "Keep the metrics bookkeeping out of the compiled region: decorate the meter's update with "
    "@torch.compiler.disable (or call it after the compiled step), so Dynamo neither splits it "
    "at every .item() nor recompiles its fragments each step for the changing float sums."
)
REMEDY_WORDS = (
    "torch.compiler.disable",
    "compiler.disable",
    "dynamo.disable",
    "outside the compiled",
    "out of the compiled",
)
EXPECT = "remedy"

N_CLS, BATCH = 10, 16


class RunningMetrics:
    def __init__(self):
        self.steps = 0
        self.sums = dict(loss=0.0, acc=0.0, conf=0.0, entropy=0.0, ece=0.0)

    def update(self, logits, y, loss):
        self.steps += 1
        probs = logits.softmax(dim=-1)
        self.sums["loss"] += loss.item()
        self.sums["acc"] += (probs.argmax(-1) == y).float().mean().item()
        conf = probs.max(dim=-1).values
        self.sums["conf"] += conf.mean().item()
        self.sums["entropy"] += -(probs * probs.clamp_min(1e-9).log()).sum(-1).mean().item()
        correct = (probs.argmax(-1) == y).float()
        bins = (conf * 10).long().clamp(max=9)
        gap = torch.zeros(10).index_add_(0, bins, conf - correct).abs().sum() / y.numel()
        self.sums["ece"] += gap.item()


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, N_CLS),
    )


def run(fresh: bool):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    meter = RunningMetrics()

    @torch.compile
    def train_step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        meter.update(logits.detach(), y, loss.detach())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    xs = torch.randn(3, BATCH, 3, 32, 32)
    ys = torch.randint(0, N_CLS, (3, BATCH))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(3):
            train_step(xs[step], ys[step])
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
