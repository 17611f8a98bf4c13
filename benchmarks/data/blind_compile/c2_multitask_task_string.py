"""A wildlife-camera inference service: one conv backbone with four small task heads
(species, age, pose, image quality) kept in an nn.ModuleDict. Each request names its task as a
string argument to the compiled model, and requests for the four tasks arrive interleaved.

User complaint: "the first request of every new task type takes seconds; it looks like the whole
network is compiled again for each task, although only the tiny head differs."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Dealing with Recompilations' - 'Graph Breaking to Reduce Recompilation Costs' "
    "(https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html: 'If a "
    "large graph is recompiling and causing high compile time, you can intentionally introduce "
    "a graph break in order to reduce recompilation costs') and 'Where to apply torch.compile?' "
    "(programming_model.where_to_apply_compile: compile 'some sub-nn.Modules')"
)
REMEDY = (
    "Separate the task-independent backbone from the part that is specialized on the task "
    "string: put torch._dynamo.graph_break() between backbone and head (or compile only the "
    "backbone, e.g. model.backbone.compile(), and run the tiny heads eagerly), so only the small "
    "head graph is recompiled per task instead of the whole network."
)
REMEDY_WORDS = (
    "graph_break()",
    "introduce a graph break",
    "insert a graph break",
    "add a graph break",
    "intentional graph break",
    "intentionally introduce",
    "compile only the backbone",
    "compile the backbone",
    "backbone.compile",
)
EXPECT = "remedy"

TASKS = {"species": 40, "age": 5, "pose": 8, "quality": 3}


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = cbr(3, 16)
        self.s1 = nn.Sequential(cbr(16, 24, 2), cbr(24, 24))
        self.s2 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48, k=1), cbr(48, 48))
        self.s3 = nn.Sequential(cbr(48, 96, 2), cbr(96, 96, k=1), cbr(96, 96), cbr(96, 112, k=1))
        self.s4 = nn.Sequential(
            cbr(112, 160, 2), cbr(160, 160, k=1), cbr(160, 176), nn.Conv2d(176, 192, 1), nn.SiLU()
        )

    def forward(self, x):
        return self.s4(self.s3(self.s2(self.s1(self.stem(x)))))


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.heads = nn.ModuleDict(
            {
                k: nn.Sequential(nn.Linear(192, 128), nn.GELU(), nn.Linear(128, n))
                for k, n in TASKS.items()
            }
        )

    def forward(self, img, task: str):
        feats = self.backbone(img).mean((2, 3))
        return F.softmax(self.heads[task](feats), dim=-1)


def run(fresh: bool):
    torch.manual_seed(0)
    model = MultiTaskNet().eval()
    compiled = torch.compile(model)
    order = list(TASKS)
    requests = [(torch.randn(4, 3, 96, 96), order[i % len(order)]) for i in range(8)]
    with torch.no_grad():
        with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
            for img, task in requests:
                probs = compiled(img, task)
                probs.argmax(-1)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
