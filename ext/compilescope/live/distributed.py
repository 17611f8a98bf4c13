"""Where this process sits in a torch.distributed job (rank and world size), if it is in one."""

from __future__ import annotations


def rank_and_world_size() -> tuple[int | None, int | None]:
    """(rank, world size) of an initialized default process group; (None, None) otherwise."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None, None
    if not (dist.is_available() and dist.is_initialized()):
        return None, None
    return dist.get_rank(), dist.get_world_size()
