"""capturing() leaves torch's caches as the user has them (a warm cache hits, as without us); capturing(fresh=True) compiles cold."""

from __future__ import annotations

import compilescope
import pytest
import torch
from compilescope.model.measured.compile_budget import compile_budget

pytestmark = pytest.mark.torch


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(24, 40)  # shapes no other test compiles

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x)).sum()


def _loop(net: torch.nn.Module, steps: int = 2) -> None:
    f = torch.compile(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(steps):
        f(torch.randn(8, 24)).backward()
        opt.step()
        opt.zero_grad()


def _hits() -> int:
    from torch._dynamo.utils import counters

    return int(counters["inductor"]["fxgraph_cache_hit"])


def test_a_warm_cache_hits_under_capturing_and_fresh_compiles_cold(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    import torch._inductor.config as inductor

    before = (inductor.fx_graph_cache, inductor.trace.provenance_tracking_level)
    torch._dynamo.reset()
    net = _Net()
    _loop(net)  # the user's own run, without compilescope: fills the cache
    torch._dynamo.reset()
    hits = _hits()
    with compilescope.capturing(real_steps=0, eager_steps=0) as cap:
        _loop(net)
    warm = cap.capture
    assert warm.caches == "user"
    # The forward and the backward both came from torch's FX-graph cache, as they would have
    # without compilescope; the capture still shows their graphs and kernels.
    assert _hits() - hits == 2
    events = [e for c in warm for e in c.cache_events]
    assert events and all(e.result == "hit" for e in events)
    assert warm[0].graph("inductor_post_grad_graph") is not None and warm[0].kernels
    budget = compile_budget(warm)
    assert budget.warm and budget.label.startswith("warm: 1 of 1 compiles from torch's cache")
    assert "caches were left on" not in warm.note  # nothing missed the cache
    # No partition lab without hearing the partitioner, and the compile says why.
    assert warm[0].lab is None and "capturing(fresh=True)" in warm[0].lab_reason
    assert (inductor.fx_graph_cache, inductor.trace.provenance_tracking_level) == before

    torch._dynamo.reset()
    hits = _hits()
    with compilescope.capturing(real_steps=0, eager_steps=0, fresh=True) as cap:
        _loop(net)
    cold = cap.capture
    assert cold.caches == "fresh" and _hits() == hits
    assert not any(e.result == "hit" for c in cold for e in c.cache_events)
    assert compile_budget(cold).label == "cold: compiled with torch's caches off"
    # Cold and fresh: every stage logged, kernels mapped to their nodes.
    assert cold[0].graph("before_post_grad_graph") is not None
    assert any(k.fused_nodes or k.origin_nodes for k in cold[0].kernels)
    assert (inductor.fx_graph_cache, inductor.trace.provenance_tracking_level) == before


def test_a_warm_capture_that_misses_says_what_it_did_not_record(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    torch._dynamo.reset()
    with compilescope.capturing(real_steps=0, eager_steps=0) as cap:
        _loop(_Net())
    capture = cap.capture
    assert any(e.result == "miss" for c in capture for e in c.cache_events)
    assert "capturing(fresh=True)" in capture.note
    assert compile_budget(capture).label == "cold: torch's caches missed"


def test_the_vector_isa_is_checked_in_the_users_cache_folder_not_the_fresh_one(monkeypatch):
    """Inductor's vector-ISA check (6 g++ runs, once per process, kept in the cache folder it
    ran in) runs before a fresh capture points Inductor at its new folder: run inside it, every
    new kernel rebuilt the check (a fresh process's first capture 10.1 s against 4.3 s,
    benchmarks/RESULTS.md, capture overhead run 2)."""
    import torch._inductor.cpu_vec_isa as cpu_vec_isa
    from compilescope.live import torch_bridge
    from torch._inductor.runtime.runtime_utils import cache_dir

    if torch.cuda.is_available():
        pytest.skip("with CUDA the check is left to Inductor (torch_bridge._check_vector_isa)")
    checked_in: list[str] = []
    monkeypatch.setattr(cpu_vec_isa, "valid_vec_isa_list", lambda: checked_in.append(cache_dir()))
    user_folder = cache_dir()
    with torch_bridge.capture_settings(fresh=True):
        capture_folder = cache_dir()
    assert capture_folder != user_folder  # the capture compiles in a fresh folder
    assert checked_in == [user_folder]
