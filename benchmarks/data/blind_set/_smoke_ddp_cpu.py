"""CPU smoke test for the DDP loop: 2 gloo ranks on localhost, both variants, a few steps.

Also checks that parameters stay identical across ranks (i.e. the final
all-reduce still happens when no_sync is used).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _worker(rank: int, world: int, steps: int, port: int) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    import ddp_grad_accum_no_sync as mod

    for remedy in (False, True):
        torch._dynamo.reset()
        t0 = time.time()
        step, sync = mod.build("cpu", remedy, rank, world)
        for _ in range(steps):
            step()
        sync()
        # parameters must agree across ranks
        flat = torch.cat([p.detach().reshape(-1) for p in _params(step)])
        ref = flat.clone()
        dist.broadcast(ref, src=0)
        ok = torch.allclose(flat, ref)
        print(
            f"rank {rank} remedy={remedy}: {steps} steps in {time.time() - t0:.1f}s, params in sync: {ok}",
            flush=True,
        )
        assert ok
    dist.destroy_process_group()


def _params(step):
    # dig the model out of the step closure (cmodel / opt are closed over)
    for cell in step.__closure__ or ():
        obj = cell.cell_contents
        if isinstance(obj, torch.optim.Optimizer):
            return [p for g in obj.param_groups for p in g["params"]]
    raise RuntimeError("optimizer not found in closure")


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    mp.spawn(_worker, args=(2, steps, 29517), nprocs=2, join=True)
