"""Findings read from the graphs and the step's accounting, on the fifth blind round's stored H200 captures: each says its remedy, and stays quiet where the evidence is absent."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import compilescope
import pytest
from compilescope.model.findings.ranked import findings
from compilescope.model.measured.timing import HostCall, OptimizerSeen, OutsideWork

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VERDICTS = ("compiled_slower", "compiled_not_faster")


def _stored(name: str) -> compilescope.Capture:
    path = FIXTURES / f"{name}_h200.capture.json.gz"
    return compilescope.Capture.from_json(gzip.decompress(path.read_bytes()))


def _causes(capture: compilescope.Capture) -> list:
    return [f for f in findings(capture) if f.kind not in VERDICTS]


def _with_real(capture: compilescope.Capture, **changes) -> compilescope.Capture:
    real = replace(capture.timings.real_steps, **changes)
    return replace(capture, timings=replace(capture.timings, real_steps=real))


def test_a_backward_run_once_per_loss_says_sum_the_losses_first():
    # Two task losses, `loss_cls.backward(retain_graph=True); loss_tok.backward()`: the
    # compiled backward's kernels run twice a step for one forward (1.65x as one backward).
    cap = _stored("b5_bert_multitask_two_backward")
    first = _causes(cap)[0]
    assert first.kind == "repeated_backward", [f.kind for f in _causes(cap)]
    assert "0/0's backward runs 2 times for each run of its forward (2 and 1 a step)" in first.what
    assert first.fixes[0].title == "sum the losses and call backward once"
    real = cap.timings.real_steps
    assert first.cost.step_s == pytest.approx(real.graph_seconds("0/0", "backward") / 2)
    # One backward per forward (every other stored capture): no word of it.
    for name in ("b5_vit_manual_l2_penalty", "b5_ensemble_python_loop"):
        assert "repeated_backward" not in [f.kind for f in findings(_stored(name))]


def test_a_model_in_float64_on_a_gpu_is_said_with_float32_as_its_fix():
    cap = _stored("b5_resnet_float64_autocast_ignored")
    first = _causes(cap)[0]
    assert first.kind == "float64_compute", [f.kind for f in _causes(cap)]
    assert "computes in float64 on the GPU: 62 of its 62 parameters" in first.what
    assert "`model.double()`" in first.fixes[0].change
    assert "astype(np.float32)" in first.fixes[0].change
    # The same capture said to have run on a CPU, and a float32 model: nothing.
    on_cpu = _with_real(cap, device="cpu")
    assert "float64_compute" not in [f.kind for f in findings(on_cpu)]
    assert "float64_compute" not in [f.kind for f in findings(_stored("b5_ensemble_python_loop"))]


def test_large_embedding_tables_with_dense_gradients_say_sparse_gradients():
    cap = _stored("b5_dlrm_dense_embedding_grads")
    (dense,) = [f for f in findings(cap) if f.kind == "dense_embedding_grads"]
    assert "8 embedding tables of 32,000,000 rows in all (15.3 GiB)" in dense.what
    assert "131,072 looked-up indices a step" in dense.what
    assert "sparse=True" in dense.fixes[0].change
    # It takes the eager optimizers' time by the tables' share of the bytes, so it ranks above
    # the "fused optimizer" answer for the same milliseconds.
    kinds = [f.kind for f in _causes(cap)]
    assert kinds.index("dense_embedding_grads") < kinds.index("eager_optimizer"), kinds
    # Small tables (the other captures have none) stay quiet.
    assert "dense_embedding_grads" not in [
        f.kind for f in findings(_stored("b5_vit_manual_l2_penalty"))
    ]


def test_copies_of_one_layer_on_one_input_say_batch_them_and_a_chain_of_layers_does_not():
    cap = _stored("b5_ensemble_python_loop")
    first = _causes(cap)[0]
    assert first.kind == "parallel_matmuls", [f.kind for f in _causes(cap)]
    assert (
        "applies `linear` to `l_x_` 32 times, each with its own weight of shape 1024 x 256:"
        in first.what
    )
    assert "stack_module_state" in first.fixes[0].change and "vmap" in first.fixes[0].change
    # BERT's 12 layers have linears of one shape too, each on the layer before: no copies.
    bert = _stored("b5_bert_multitask_two_backward")
    assert "parallel_matmuls" not in [f.kind for f in findings(bert)]


def test_an_l2_penalty_over_the_parameters_says_the_optimizers_weight_decay():
    cap = _stored("b5_vit_manual_l2_penalty")
    first = _causes(cap)[0]
    assert first.kind == "launch_bound"
    assert "`aten::pow` 200 a step for 200 parameter tensors, with its backward" in first.what
    assert first.fixes[0].title == "the optimizer's weight_decay instead of a penalty in the loss"
    # A gradient clip's norms have no backward (no `aten::mul` twice per parameter): foreach
    # stays the first fix, as for the second blind round's clip loop.
    real = cap.timings.real_steps
    clip = tuple(
        w for w in real.outside if not (w.name == "aten::mul" and w.kind == "eager_op")
    ) + (OutsideWork("eager_op", "aten::mul_", 0.0003, 200.0, where=real.outside[1].where),)
    clipped = _with_real(cap, outside=clip)
    (launch,) = [f for f in findings(clipped) if f.kind == "launch_bound"]
    assert "weight_decay" not in launch.fixes[0].title


def test_a_batch_gathered_a_sample_at_a_time_says_index_whole_batches():
    cap = _stored("b5_dataloader_gpu_tensordataset")
    (host,) = [f for f in findings(cap) if f.kind == "host_bound"]
    assert "Samples are taken one at a time and stacked" in host.what
    assert host.fixes[0].title == "index whole batches, not one sample at a time"
    # Host time without the stack (per-sample reads that are not collated): no such word.
    real = cap.timings.real_steps
    no_stack = tuple(
        replace(h, ops=tuple(o for o in h.ops if o.name != "aten::stack")) for h in real.host_time
    )
    (other,) = [f for f in findings(_with_real(cap, host_time=no_stack)) if f.kind == "host_bound"]
    assert "one at a time" not in other.what
    assert other.fixes[0].title != host.fixes[0].title


def test_the_optimizers_seen_are_kept_for_these_findings():
    # The L2 and per-parameter rules count by the stepped parameter tensors.
    real = _stored("b5_vit_manual_l2_penalty").timings.real_steps
    assert [o.params for o in real.optimizers] == [200]
    assert isinstance(real.optimizers[0], OptimizerSeen)


def test_a_host_bound_step_names_the_users_costliest_call_into_other_code():
    # Host time outside ATen ops (`gc.collect()` every step), by the profiler's Python tracer.
    cap = _stored("b5_dataloader_gpu_tensordataset")
    real = cap.timings.real_steps
    no_stack = tuple(
        replace(h, ops=tuple(o for o in h.ops if o.name != "aten::stack")) for h in real.host_time
    )
    gc_call = HostCall("train.py:12 step", "gc.collect", 0.6 * real.split_wall.median_s)
    cap = _with_real(cap, host_time=no_stack, host_calls=(gc_call,))
    (host,) = [f for f in findings(cap) if f.kind == "host_bound"]
    assert (
        "`gc.collect` in `train.py:12 step` takes" in host.what
        and "(60% of the profiled" in host.what
    )
    assert host.fixes[0].title == "call `gc.collect` less often, or outside the step"
    # Data loading's own calls keep the data-loading fix (workers), with no "call it less often".
    loading = replace(gc_call, call="__next__ (torch/utils/data/dataloader.py)")
    (data,) = [
        f for f in findings(_with_real(cap, host_calls=(loading,))) if f.kind == "host_bound"
    ]
    assert "__next__" in data.what and "less often" not in data.fixes[0].title
    again = compilescope.Capture.from_json(cap.to_json())
    assert again.timings.real_steps.host_calls == (gc_call,)
