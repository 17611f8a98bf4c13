"""A compiled text-classifier service (embedding, one attention layer, mean-pool head) that
answers batches of requests under torch.no_grad(). A few requests ask for debug outputs via
bool keyword flags (return_attn / return_hidden, for an explanation UI); each new flag
combination fails the guards on those constants and recompiles the whole model, and each of
those graphs then serves one request.

User complaint: "latency spikes of several seconds on the rare 'explain' requests, always the
first time a given debug option is used. The normal path is fast. Can I avoid paying a full
compile for requests that hardly ever happen?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "recipe 'Dynamic Compilation Control with torch.compiler.set_stance' (https://docs.pytorch."
    "org/tutorials/recipes/torch_compiler_set_stance_tutorial.html: 'eager_on_recompile' ... "
    "'useful if we don't expect recompilations to happen frequently, but when one is required, "
    "we'd rather pay the cost of running eagerly over the cost of recompilation'); "
    "torch.compiler.set_stance API doc ('eager_on_recompile: Run code eagerly when a recompile "
    "is necessary. If there is cached compiled code valid for the input, it will still be "
    "used'); docs 'Dealing with Recompilations' (constants are guarded on their value)"
)
REMEDY = (
    "After the warm-up call on the normal path, set torch.compiler.set_stance("
    "'eager_on_recompile') (or send the rare debug requests to the uncompiled module / under "
    "set_stance('force_eager')), so the rare flag combinations run eagerly instead of each "
    "compiling a graph that is used once."
)
REMEDY_WORDS = (
    "eager_on_recompile",
    "force_eager",
    "uncompiled",
    "_orig_mod",
    "original module",
    "original model",
)
EXPECT = "remedy"

VOCAB, D, HEADS, LAYERS, SEQ, BATCH, N_CLS = 2000, 64, 4, 1, 32, 8, 5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) / (D // HEADS) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)))), att


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, D))
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.head = nn.Linear(D, N_CLS)

    def forward(self, ids, return_attn=False, return_hidden=False):
        x = self.emb(ids) + self.pos
        attns, hidden = [], []
        for layer in self.layers:
            x, att = layer(x)
            if return_attn:
                attns.append(att)
            if return_hidden:
                hidden.append(x)
        out = {"probs": torch.softmax(self.head(x.mean(1)), -1)}
        if return_attn:
            out["attn"] = torch.stack(attns, 1)
        if return_hidden:
            out["hidden"] = torch.stack(hidden, 1)
        return out


# request index -> debug flags; every other request is a plain classification
DEBUG = {
    7: dict(return_attn=True),
    13: dict(return_hidden=True),
    19: dict(return_attn=True, return_hidden=True),
}


def run(fresh: bool):
    torch.manual_seed(0)
    model = TextClassifier().eval()
    compiled = torch.compile(model)
    requests = torch.randint(0, VOCAB, (24, BATCH, SEQ))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        with torch.no_grad():
            for i, ids in enumerate(requests):
                compiled(ids, **DEBUG.get(i, {}))
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
