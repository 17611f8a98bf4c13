"""A 2-rank CPU job (gloo) for the distributed tests: a tiny DDP model under torch.compile.

    TORCH_TRACE=OUT/trace torchrun --nproc-per-node 2 tests/distributed/ddp_job.py OUT [--diverge]

Each rank captures itself live (`compilescope.capturing()`) and saves its capture to OUT/live;
TORCH_TRACE writes each rank's log to OUT/trace. DDP buckets are made small, so Dynamo's
DDPOptimizer splits the graph; the same model under FSDP2 (`fully_shard`) is compiled too; a
compiled function all-reduces inside its graph. With --diverge, rank 1 feeds its second DDP step
another batch size and recompiles.
"""

from __future__ import annotations

import sys

import compilescope
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel


class Net(torch.nn.Module):
    """Defined here, not a torch.nn.Sequential: Dynamo starts a compile only at a frame outside
    torch (DDP's own forward is skipped), and compiles this forward inside DDP's."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(16, 512)
        self.mid = torch.nn.Linear(512, 512)
        self.out = torch.nn.Linear(512, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.mid(torch.relu(self.inp(x)))))


def main() -> None:
    out, diverge = sys.argv[1], "--diverge" in sys.argv[2:]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Net()
    # 1 MiB buckets, the smallest DDPOptimizer takes (it asserts the bucket cap is at least
    # torch's 1 MiB first-bucket cap): the 1 MiB middle layer gets its own bucket, so it splits.
    ddp = DistributedDataParallel(model, bucket_cap_mb=1)
    step = torch.compile(ddp, backend="aot_eager", dynamic=False)

    def mean_over_ranks(x: torch.Tensor) -> torch.Tensor:
        return funcol.all_reduce(x * 2, "sum", dist.group.WORLD) / world

    synced = torch.compile(mean_over_ranks, backend="aot_eager", dynamic=False)
    torch.manual_seed(0)
    sharded = Net()
    fully_shard(sharded.mid)  # FSDP2: the middle layer, then the rest, sharded over the ranks
    fully_shard(sharded)
    fsdp_step = torch.compile(sharded, backend="aot_eager", dynamic=False)
    with compilescope.capturing() as cap:
        for i in range(2):
            batch = 12 if diverge and rank == 1 and i == 1 else 8
            step(torch.randn(batch, 16)).sum().backward()
        fsdp_step(torch.randn(8, 16)).sum().backward()
        total = synced(torch.full((4,), float(rank)))
    assert torch.allclose(total, torch.full((4,), float(sum(range(world)) * 2 / world)))
    compilescope.write_rank(cap, f"{out}/live")
    # Every rank waits here before tearing down: a gloo group destroyed while a peer still
    # works can abort the process at exit (pytorch/pytorch#179291).
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
