"""A text classifier fed unpadded batches whose sequence length changes every batch,
compiled with dynamic=False (copied from a benchmark script).

User complaint: "every new batch length triggers another compile; the first epoch is
mostly compiling".
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'Dealing with Recompilations' - 'Is Dynamic Shapes Enabled?' "
    "(https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html) "
    "and 'Reducing Compile Time' - 'Use dynamic shapes to avoid shape-driven recompiles'"
)
REMEDY = (
    "Do not set dynamic=False when input shapes vary: use dynamic=None/True or mark the "
    "sequence dimension with torch._dynamo.mark_dynamic so one graph covers all lengths."
)
REMEDY_WORDS = ("mark_dynamic", "dynamic=true", "dynamic=none", "dynamic shapes")
EXPECT = "remedy"

VOCAB, D, N_CLS = 512, 64, 4
LENGTHS = (17, 23, 31, 12, 28, 20)


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(
            D, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.0
        )
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(D, N_CLS)

    def forward(self, tokens):
        h = self.enc(self.emb(tokens))
        return self.head(h.mean(dim=1))


def run(fresh: bool):
    torch.manual_seed(0)
    model = TextClassifier()
    compiled = torch.compile(model, dynamic=False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randint(0, VOCAB, (8, n)), torch.randint(0, N_CLS, (8,))) for n in LENGTHS]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for tokens, labels in batches:
            loss = F.cross_entropy(compiled(tokens), labels)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
