"""What a timing measured, in words the view shows beside the figures."""

from __future__ import annotations


def timing_description(
    compile_id: str, inputs: list[object], grad_enabled: bool, stages: set[str], fixed: int | None
) -> str:
    """How one graph was timed, in words: what ran against what, on which inputs, how often."""
    mode = _mode_text(inputs, grad_enabled, stages)
    how = (
        f"{fixed} timed runs each"
        if fixed is not None
        else "up to 3 warm-up and 10 timed runs each, fewer for long runs (time-boxed)"
    )
    return (
        f"Dynamo graph {compile_id}: the eager GraphModule vs the compiled callable{mode}, "
        f"forward, then backward of the outputs that need grad (random gradients; each backward "
        f"timed after an untimed forward), on {len(inputs)} fresh inputs of the recorded "
        f"shapes, dtypes and strides (floats drawn with each input's recorded mean and standard "
        f"deviation, integers with the values they compiled with); {how}"
    )


def _mode_text(inputs: list[object], grad_enabled: bool, stages: set[str]) -> str:
    """What grad mode the timed runs had, in the words the capture's graphs justify."""
    if not grad_enabled:
        return " (grad mode off, as the code ran it)"
    if "aot_inference_graph" in stages:
        # AOTAutograd saw that no output needs grad (e.g. a `with torch.no_grad()` inside the
        # compiled code): an inference graph, timed as such.
        return " (an inference graph: no output needs grad)"
    grad = any(isinstance(s, tuple) and len(s) == 5 and s[4] for s in inputs)
    return " (training mode: inputs require grad)" if grad else ""
