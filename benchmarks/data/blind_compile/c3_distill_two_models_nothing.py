"""CONTROL. Knowledge distillation on tabular data: a frozen teacher MLP runs in eval mode
under torch.no_grad() and a smaller student MLP trains on the teacher's soft targets. Both modules
are compiled with .compile() as the docs advise; the teacher compiles one inference graph and
the student one training graph, both compiled once and reused on every step. Shapes are
constant, there are no repeated blocks, no Python scalars change, no options are set.

User complaint: "I see two separate compilations before the first step finishes (one for each
network). Is that a sign something is being compiled twice?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Where to apply torch.compile?' (https://docs.pytorch.org/docs/stable/compile/"
    "programming_model.where_to_apply_compile.html: compile the top-level nn.Module with "
    "model.compile(); each compiled module traces its own graph) and 'Dealing with "
    "Recompilations' (recompilations are needed for soundness; here none happen: two "
    "different modules give two graphs, each compiled once)"
)
REMEDY = (
    "Nothing to change: one inference graph for the teacher and one training graph for the "
    "student is the minimum for a distillation loop with two different networks; both are "
    "reused on every later step."
)
REMEDY_WORDS = ("nothing",)
EXPECT = "nothing"

N_FEAT, N_CLS, BATCH, T = 64, 10, 256, 4.0


def make_teacher():
    return nn.Sequential(
        nn.Linear(N_FEAT, 512),
        nn.BatchNorm1d(512),
        nn.ReLU(),
        nn.Dropout(0.2),
        nn.Linear(512, 256),
        nn.BatchNorm1d(256),
        nn.ReLU(),
        nn.Linear(256, N_CLS),
    )


def make_student():
    return nn.Sequential(
        nn.Linear(N_FEAT, 96), nn.LayerNorm(96), nn.GELU(), nn.Dropout(0.1), nn.Linear(96, N_CLS)
    )


def run(fresh: bool):
    torch.manual_seed(0)
    teacher = make_teacher().eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = make_student()
    teacher.compile()
    student.compile()
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    xs = torch.randn(4, BATCH, N_FEAT)
    ys = torch.randint(0, N_CLS, (4, BATCH))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(4):
            with torch.no_grad():
                soft = F.softmax(teacher(xs[step]) / T, dim=-1)
            logits = student(xs[step])
            kd = F.kl_div(F.log_softmax(logits / T, dim=-1), soft, reduction="batchmean") * T * T
            loss = 0.7 * kd + 0.3 * F.cross_entropy(logits, ys[step])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
