"""The plain-text summary names why each graph broke in whole sentences (issue 32 item 4): it
cut torch's generic first line at 100 characters ("... a variadic function call, e.g. f(")."""

from __future__ import annotations

from compilescope.model.breaks import reason_line

GPT2_REASON = (
    "Encountered graph break when attempting to trace CALL_FUNCTION_EX: a variadic function "
    "call, e.g. f(*args):\n\nlogging.Logger method not supported for non-export cases\n"
    "  Explanation: logging.Logger methods are not supported for non-export cases.\n"
)


def test_the_gpt2_summary_says_why_each_break_happened_whole(loaded):
    text = loaded("gpt2").summary()
    lines = [line.strip() for line in text.splitlines() if "graph break at" in line]
    assert len(lines) == 2
    for line in lines:
        assert line.endswith(": logging.Logger method not supported for non-export cases"), line
    assert "e.g. f(" not in text


def test_a_reason_is_cut_between_sentences_never_inside_one():
    assert reason_line(GPT2_REASON) == "logging.Logger method not supported for non-export cases"
    long = "First sentence here. " + "Second one is long. " * 12 + "Last."
    line = reason_line(long, width=60)
    assert line == "First sentence here. Second one is long. Second one is long. ..."
    # One sentence longer than the width is kept whole.
    single = "A " + "very " * 50 + "long sentence (with f(*args) inside)."
    assert reason_line(single, width=40) == single
    assert reason_line("Encountered graph break when attempting to trace CALL: x:") == (
        "Encountered graph break when attempting to trace CALL: x:"
    )
    assert reason_line("") == ""
