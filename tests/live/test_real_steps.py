"""Real-step timings inside capturing(): the user's own steps timed as they ran, split, eager too."""

from __future__ import annotations

import compilescope
import pytest
import torch

pytestmark = pytest.mark.torch


def _training(steps: int, shapes=None, optimizer: bool = True):
    torch.manual_seed(0)
    # Each test compiles the same forward for a new module: start from fresh Dynamo caches, or
    # the recompile limit leaves later tests' steps eager, with nothing compiled to time.
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model)
    losses = []

    def loop():
        for i in range(steps):
            rows = shapes(i) if shapes else 8
            loss = compiled(torch.randn(rows, 32)).pow(2).mean()
            loss.backward()
            losses.append(loss.item())
            if optimizer:
                opt.step()
                opt.zero_grad()

    return loop, losses


def test_capturing_times_the_users_own_steps_compiled_and_eager():
    loop, losses = _training(30)
    with compilescope.capturing() as cap:
        loop()
    assert len(losses) == 30  # the user's loop ran every step
    real = cap.capture.timings.real_steps
    assert real is not None and real.device == "cpu"
    assert real.compiled.repeats == 10 and real.split_wall.repeats == 10
    assert real.eager is not None and real.eager.repeats == 5
    # Every kernel of the real steps is joined to a compile id and a kernel of the capture.
    kernels = {(str(c.id), k.name) for c in cap.capture for k in c.kernels}
    assert real.kernels and all((k.compile_id, k.kernel) in kernels for k in real.kernels)
    assert {g.role for g in real.graphs} == {"forward", "backward"}
    assert all(k.calls_per_run >= 1 and k.time.median_s > 0 for k in real.kernels)
    # The split adds up to the step's wall time.
    total = real.graphs_s + real.outside_graphs_s + real.between_s
    if "noisy" not in real.note:
        assert total == pytest.approx(real.compiled.median_s, rel=1e-9)
    # The windows are placed in the user's own count of steps: after compiling settled.
    assert real.first_step is not None and 2 < real.first_step < 30 - 10
    assert real.eager_first_step is not None and real.eager_first_step > real.first_step + 19
    assert 0 < real.graphs_s
    # The compiler's stance is the user's again.
    from torch._dynamo import eval_frame

    assert eval_frame._stance.stance == "default"
    # Saved and loaded, the same figures.
    again = compilescope.Capture.from_json(cap.capture.to_json())
    assert again.timings.real_steps == real
    assert "real steps" in cap.capture.summary()


def test_no_optimizer_step_means_no_real_steps_and_nothing_changed():
    loop, losses = _training(12, optimizer=False)
    with compilescope.capturing() as cap:
        loop()
    assert len(losses) == 12
    assert cap.capture.timings.real_steps is None
    # The capture says why no step was timed, in the summary and in saved JSON too.
    note = cap.capture.timings.real_steps_note
    assert note.startswith("no optimizer.step() ran")
    # No training loop, no word first in the findings (tutorial 06 reads the first ones' fixes).
    assert "steps_not_timed" not in [f.kind for f in compilescope.findings(cap.capture)]
    assert f"real steps: not timed ({note})" in cap.capture.summary()
    assert compilescope.Capture.from_json(cap.capture.to_json()).timings.real_steps_note == note


def test_a_loop_too_short_for_a_window_says_how_many_steps_it_needs():
    loop, losses = _training(5)
    with compilescope.capturing() as cap:
        loop()
    assert len(losses) == 5 and cap.capture.timings.real_steps is None
    assert "ended after 5 optimizer steps" in cap.capture.timings.real_steps_note
    assert "then 10 timed" in cap.capture.timings.real_steps_note
    # The findings say it first: no list of them reads as a speed verdict never made.
    first = compilescope.findings(cap.capture)[0]
    assert first.kind == "steps_not_timed" and "then 10 timed" in first.what


def test_a_short_loop_gets_the_steps_it_has_timed_whole():
    # 7 steps (issue 42): the first compiles, two settle, four are timed whole, and said so.
    loop, losses = _training(7)
    with compilescope.capturing() as cap:
        loop()
    real = cap.capture.timings.real_steps
    assert len(losses) == 7 and real is not None, cap.capture.timings.real_steps_note
    assert real.compiled.repeats == len(real.step_walls) == 4 and real.compiled.median_s > 0
    assert real.graphs == () and real.eager is None
    assert "4 steps timed whole (of 10), not split, and no eager steps" in real.note
    assert "real steps" in cap.capture.summary()


def test_a_notebook_sized_loop_of_20_steps_is_timed_and_split():
    # The loop of issue 42's "notebook-sized loop": the stopwatch's 10 steps, a split from the
    # steps left; the eager window would need more steps, and the note says how many.
    loop, losses = _training(20)
    with compilescope.capturing() as cap:
        loop()
    real = cap.capture.timings.real_steps
    assert len(losses) == 20 and real is not None, cap.capture.timings.real_steps_note
    assert real.compiled.repeats == 10 and real.graphs and real.split_wall is not None
    assert 2 <= real.split_wall.repeats < 10 and real.eager is None
    assert "the split is from" in real.note and "no eager steps were timed" in real.note
    needed = int(real.note.split("(")[-1].split(" steps in all")[0])
    assert 20 < needed <= 20 + 10 + 6, real.note
    from torch._dynamo import eval_frame

    assert eval_frame._stance.stance == "default"  # no eager window opened after the block


def test_a_loop_that_ends_in_the_eager_window_says_how_many_steps_it_needs_and_ran():
    # 25 steps (issue 32): the compiled windows are timed, the eager ones are not; the note
    # says how many steps they need and how many ran.
    loop, losses = _training(25)
    with compilescope.capturing() as cap:
        loop()
    real = cap.capture.timings.real_steps
    assert len(losses) == 25 and real is not None and real.eager is None
    assert "the code ended after 25 optimizer steps, before the eager steps were timed" in real.note
    assert "1 step to warm up and 5 timed, and 1 ran;" in real.note
    needed = int(real.note.split("; ")[-1].split(" steps in all")[0])
    assert 25 < needed <= 25 + 6, real.note  # 29 where only the first step compiled


def test_a_recompile_in_the_window_starts_it_over():
    # Step 4 changes the batch: a recompile while the steps are being timed.
    loop, losses = _training(40, shapes=lambda i: 8 if i < 4 else 12)
    with compilescope.capturing(eager_steps=0) as cap:
        loop()
    real = cap.capture.timings.real_steps
    assert real is not None and real.eager is None
    assert "compiled during the timed steps" in real.note


def test_a_failure_in_timing_never_reaches_the_users_loop(monkeypatch):
    from compilescope.live.timing import real_steps

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(real_steps, "wrapped_kernels", broken)
    loop, losses = _training(30)
    with compilescope.capturing() as cap:
        loop()
    assert len(losses) == 30
    assert cap.capture.timings is None or cap.capture.timings.real_steps is None
    from torch._dynamo import eval_frame

    assert eval_frame._stance.stance == "default"


def test_real_steps_off():
    loop, _ = _training(20)
    with compilescope.capturing(real_steps=0) as cap:
        loop()
    assert cap.capture.timings is None or cap.capture.timings.real_steps is None


def test_eager_memory_verdict():
    from compilescope.live.timing.eager_memory_guard import eager_memory_verdict

    gib = 1 << 30
    # Issue 24's case: a compiled step 1.33 GiB above what is held between steps, 3 GiB free.
    verdict = eager_memory_verdict(gib, gib + int(1.33 * gib), 3 * gib)
    assert verdict and "eager steps skipped" in verdict and "3.0 GiB are free" in verdict
    assert eager_memory_verdict(gib, gib + int(1.33 * gib), 5 * gib) is None
    assert eager_memory_verdict(gib, gib // 2, 0) is None  # a peak below now: nothing to fear


def test_eager_steps_are_skipped_where_they_may_not_fit(monkeypatch):
    # On a GPU the timer reads the device's memory; here the reading is injected: the compiled
    # step needs 2 GiB on top, and 4 GiB are free, less than an eager step may need.
    from compilescope.live.timing.real_steps import RealStepTimer

    gib = 1 << 30
    monkeypatch.setattr(RealStepTimer, "_memory_reading", lambda self: (gib, 3 * gib, 4 * gib))
    loop, losses = _training(30)
    with compilescope.capturing() as cap:
        loop()
    assert len(losses) == 30
    real = cap.capture.timings.real_steps
    assert real is not None and real.compiled.repeats == 10 and real.eager is None
    assert "eager steps skipped" in real.note and "4.0 GiB are free" in real.note
    from torch._dynamo import eval_frame

    assert eval_frame._stance.stance == "default"


def test_a_compiled_optimizer_step_compiles_as_without_compilescope():
    # A training step compiled whole, `opt.step()` included: torch calls the optimizer's post
    # hooks inside the compiled step, so Dynamo meets compilescope's own. Dynamo traces through
    # it without a break (it once compiled our hook-stack code into the user's capture, five
    # compile ids of ours and a "post_hook falls back to eager" finding; then broke the graph at
    # a disabled hook); the steps are still followed.
    import pathlib

    from compilescope.common import OWN_HOOK_REASON

    torch.manual_seed(0)
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(4, 16)

    @torch.compile(backend="aot_eager")
    def step():
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()

    with compilescope.capturing() as cap:
        for _ in range(30):
            step()
    capture = cap.capture
    ours = pathlib.Path(compilescope.__file__).parent
    frames = [c.frame.file for c in capture]
    assert frames and not [f for f in frames if pathlib.Path(f).is_relative_to(ours)]
    said = [b.text or b.reason for c in capture for b in c.graph_breaks]
    assert not any(OWN_HOOK_REASON in text for text in said)
    # No frame is left to eager because of us (it read "eager at compilescope's hook").
    assert not [c.status for c in capture if c.failure]
    found = compilescope.findings(capture)
    assert found and not [f for f in found if "post_hook" in f.what or "_pop" in f.what]
    assert all(OWN_HOOK_REASON not in (f.torch.message if f.torch else "") for f in found)
    # Our hook still ran in the compiled step: the window was reached and the steps timed whole
    # (aot_eager has no kernels to split them by; without the hook, no optimizer.step() ran).
    real = capture.timings.real_steps
    assert real is not None and real.compiled.repeats == 10 and not real.graphs
    assert "no kernel compiled inside the block" in real.note


class _BrokenTiny(torch.nn.Module):
    """Four tiny layers split by three graph breaks: on a CPU, the compiled step (eight small
    graphs and the calls between them) is slower than eager (measured 0.33 against 0.19 ms)."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b, c, d = self.layers
        x = torch.relu(a(x))
        torch._dynamo.graph_break()
        x = torch.relu(b(x))
        torch._dynamo.graph_break()
        x = torch.relu(c(x))
        torch._dynamo.graph_break()
        return torch.relu(d(x)).sum()


@pytest.mark.timing  # the verdict compares measured steps
def test_a_training_loop_gets_a_budget_that_adds_up_and_the_verdict_when_compiled_is_slower():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _BrokenTiny()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    x = torch.randn(2, 8)
    with compilescope.capturing() as cap:
        for _ in range(40):
            step(x).backward()
            opt.step()
            opt.zero_grad()
    real = cap.capture.timings.real_steps
    assert real is not None and real.eager is not None and real.graphs
    budget = compilescope.tables.step_budget(cap.capture)
    *parts, whole = budget
    assert whole["kind"] == "step" and whole["seconds"] == real.compiled.median_s
    assert abs(sum(p["seconds"] for p in parts) - whole["seconds"]) < 1e-9
    assert all(p["seconds"] >= 0 for p in parts if p["kind"] != "unexplained")
    assert sum(p["kind"] == "graph" for p in parts) == len(real.graphs)
    assert any(p["kind"] == "optimizer" for p in parts)
    # compiled slower than eager, measured in the same window: said first, with both numbers
    assert real.compiled.median_s > real.eager.median_s, (real.compiled, real.eager)
    first = compilescope.findings(cap.capture)[0]
    assert first.kind == "compiled_slower", first.what
    assert f"{real.compiled.median_s * 1e3:.3f} ms compiled against" in first.what
    assert f"{real.eager.median_s * 1e3:.3f} ms eager" in first.what
    assert "step budget" in cap.capture.summary()


def test_on_a_gpu_the_profiled_split_window_is_shorter_and_the_note_says_so(monkeypatch):
    # The step that ends the profiled window pays for the profile: 3 steps there, not 10
    # (real_steps.PROFILED_STEPS; the figures are in benchmarks/RESULTS.md). No GPU here: the
    # timer is told it runs on one.
    from compilescope.live.timing import real_steps

    monkeypatch.setattr(real_steps, "cuda_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    timer = real_steps.RealStepTimer(session=None, steps=10)  # type: ignore[arg-type]
    assert timer._split_length() == real_steps.PROFILED_STEPS == 3
    timer._heard = 0  # it heard the code compile, then the block ended before a window
    assert timer.finish() is None
    assert "then 10 timed and 3 more for the split" in timer.notes[-1]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert real_steps.RealStepTimer(session=None, steps=10)._split_length() == 10  # type: ignore[arg-type]


def test_two_optimizers_in_one_training_step_make_one_step_not_two():
    # The fifth blind round's DLRM steps SGD for its tables and AdamW for its MLP each step:
    # each optimizer's end was a boundary, so a "step" was half a training step (0.50x the
    # stopwatch; the eager window's median, 0.045 ms, was the AdamW step alone).
    torch._dynamo.reset()
    torch.manual_seed(0)
    first, second = torch.nn.Linear(8, 8), torch.nn.Linear(8, 1)
    model = torch.nn.Sequential(first, torch.nn.ReLU(), second)
    opt_a = torch.optim.SGD(first.parameters(), lr=0.01)
    opt_b = torch.optim.AdamW(second.parameters(), lr=0.01)
    step = torch.compile(model)
    x = torch.randn(4, 8)
    with compilescope.capturing() as cap:
        for _ in range(60):
            step(x).sum().backward()
            opt_a.step()
            opt_b.step()
            opt_a.zero_grad()
            opt_b.zero_grad()
    real = cap.capture.timings.real_steps
    assert real is not None and real.kernels, cap.capture.timings
    forward = [k.calls_per_run for k in real.kernels if k.role == "forward"]
    assert forward and min(forward) == 1.0, forward  # once per training step, not 0.5
    assert {o.name for o in real.optimizers} == {"SGD", "AdamW"}
    # Both optimizers' time is in the step's optimizer time, each measured to its own end.
    assert real.optimizer_s is not None and 0 < real.optimizer_s < real.compiled.median_s


def test_where_an_optimizer_is_built_is_its_assignment_not_prose_naming_it(tmp_path):
    # The fifth blind round's DLRM names "SGD (which supports sparse gradients)" in its
    # docstring, above `opt_emb = torch.optim.SGD(...)`: the docstring line was shown.
    import importlib.util

    source = tmp_path / "loop_with_prose.py"
    source.write_text(
        '"""Tables trained with SGD (which supports sparse gradients)."""\n'
        "import torch\n"
        "from compilescope.live.timing.step_context import optimizer_seen\n\n\n"
        "def build():\n"
        "    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)\n"
        "    return optimizer_seen(opt)\n"
    )
    spec = importlib.util.spec_from_file_location("loop_with_prose", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen = module.build()
    assert (seen.line, seen.code) == (
        7,
        "opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)",
    )
