"""A private torch API that a feature needs is gone (simulated): the capture still works, and
says which feature is not available on this torch (ARCHITECTURE.md, the boundary to torch)."""

from __future__ import annotations

import compilescope
import pytest
import torch

pytestmark = pytest.mark.torch


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def _capture():
    torch._dynamo.reset()
    torch.manual_seed(0)
    return compilescope.capture(MLP(), torch.randn(8, 16), timings=False)


def test_the_missing_apis_of_three_features_leave_a_whole_capture_with_notes(monkeypatch):
    import torch._dynamo.convert_frame as convert_frame

    monkeypatch.delattr(convert_frame, "register_bytecode_hook")
    monkeypatch.delattr(torch._C._autograd, "_push_saved_tensors_default_hooks")
    import torch._inductor.custom_graph_pass as custom_graph_pass
    from torch._inductor import codecache  # noqa: F401  (torch's own imports of it, done first)

    monkeypatch.delattr(custom_graph_pass, "CustomGraphPass")  # our import of it: ImportError
    cap = _capture()
    version = torch.__version__
    assert f"memory held for backward: not available on torch {version}" in cap.note
    assert (
        f"compile ids of compiled forwards (held memory): not available on torch {version}"
        in cap.note
    )
    assert (
        f"module paths of the AOT and post-grad graphs: not available on torch {version}"
        in cap.note
    )
    # The rest of the capture is intact: graphs of every stage, kernels, the partition.
    (c,) = [c for c in cap if c.partition is not None]
    for kind in ("dynamo_output_graph", "aot_forward_graph", "aot_backward_graph"):
        assert c.graph(kind) is not None, kind
    assert c.kernels
    assert not c.held.measured
    assert "note: " in str(cap) and "not available on torch" in str(cap)


def test_a_feature_that_fails_while_the_capture_is_built_is_a_note_not_an_error(monkeypatch):
    import compilescope.live.session as session

    def gone(*_args):
        raise AttributeError("module 'torch._functorch.partitioners' has no attribute 'x'")

    monkeypatch.setattr(session, "with_partition_labs", gone)
    cap = _capture()
    assert "the partition lab: not available on torch" in cap.note
    assert "AttributeError" in cap.note
    (c,) = [c for c in cap if c.partition is not None]
    assert c.held is not None and c.held.measured  # the features after it still ran
    assert c.kernels


def test_with_every_api_there_the_capture_has_no_such_note():
    cap = _capture()
    assert "not available" not in cap.note


def test_a_torch_older_than_the_matrix_passes_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.8.0+cu128")
    with pytest.raises(RuntimeError, match=r"needs torch >= 2\.11; this is torch 2\.8\.0\+cu128"):
        with compilescope.capturing():
            pass
    monkeypatch.setattr(torch, "__version__", "2.11.0")
    with compilescope.capturing(real_steps=0) as cap:
        pass
    assert cap.capture.compiles == ()
