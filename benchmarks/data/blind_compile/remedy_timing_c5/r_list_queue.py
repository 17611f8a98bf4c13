"""Twin of c5_feature_queue_list: contrastive memory bank kept as a Python list on the module.

without: forward does torch.cat(self.queue) and appends the new keys (the list grows each step).
with:    a preallocated register_buffer queue plus a tensor pointer, written in place (MoCo style).
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, D_IN, D, K_BATCHES, STEPS = 32, 64, 64, 6, 8


class Contrast(nn.Module):
    def __init__(self, buffer_queue):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(D_IN, 256), nn.GELU(), nn.Linear(256, D))
        self.buffer_queue = buffer_queue
        if buffer_queue:
            self.register_buffer("queue", F.normalize(torch.randn(K_BATCHES * B, D), dim=1))
            self.register_buffer("ptr", torch.zeros((), dtype=torch.long))
        else:
            self.queue = [F.normalize(torch.randn(B, D), dim=1)]

    def forward(self, q_in, k_in):
        q = F.normalize(self.enc(q_in), dim=1)
        with torch.no_grad():
            k = F.normalize(self.enc(k_in), dim=1)
        if self.buffer_queue:
            bank = self.queue.clone().detach()
        else:
            bank = torch.cat(self.queue)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ bank.t()], dim=1) / 0.07
        if self.buffer_queue:
            idx = (self.ptr + torch.arange(B)) % self.queue.shape[0]
            self.queue.index_copy_(0, idx, k)
            self.ptr.copy_((self.ptr + B) % self.queue.shape[0])
        else:
            self.queue.append(k)
            if len(self.queue) > K_BATCHES:
                self.queue.pop(0)
        return F.cross_entropy(logits, torch.zeros(B, dtype=torch.long))


def main(mode):
    torch.manual_seed(0)
    model = Contrast(buffer_queue=(mode == "with"))
    model.compile()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, D_IN, generator=g), torch.randn(B, D_IN, generator=g)) for _ in range(STEPS)
    ]
    t = time.perf_counter()
    for a, b in data:
        model(a, b).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
