"""A Ctrl-C that Python drops inside a weakref callback still stops the capture's code."""

from __future__ import annotations

import signal
import sys
import time
import weakref

import compilescope
import pytest
import torch
from compilescope.live.interrupts import redelivered

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def _pythons_sigint_handler():
    """SIGINT handled as in a user's shell or kernel. A pytest-xdist worker starts with SIGINT
    ignored (its controller takes Ctrl-C), and `_thread.interrupt_main` then does nothing: the
    redelivery tests failed on a worker where no earlier test had put Python's handler back."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


class _Referent:
    pass


def _drop_an_interrupt() -> None:
    """Raise KeyboardInterrupt where Python cannot propagate it, as SIGINT's handler does when
    it runs inside a weakref callback (Python prints "Exception ignored in" and drops it)."""

    def callback(_: object) -> None:
        raise KeyboardInterrupt

    referent = _Referent()
    ref = weakref.ref(referent, callback)
    del referent  # the callback runs here
    assert ref() is None


def _spin() -> None:
    """Run bytecodes (at which the main thread takes a pending interrupt) for up to 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pass


def test_an_interrupt_dropped_in_a_weakref_callback_is_raised_again():
    with pytest.raises(KeyboardInterrupt):
        with redelivered():
            _drop_an_interrupt()
            _spin()


def test_an_interrupt_that_arrives_while_the_hook_starts_its_timer_is_raised_again(monkeypatch):
    """On 2 busy cores the timer's thread fired before `Timer.start()` returned to the hook,
    which lost the interrupt a second time (a clean-clone run). Here the first timer "fires"
    inside `start()`, as it did there."""
    import compilescope.live.interrupts as interrupts

    real_timer, started = interrupts.threading.Timer, []

    class EarlyTimer(real_timer):  # type: ignore[misc,valid-type]
        def start(self) -> None:
            started.append(self)
            if len(started) == 1:
                raise KeyboardInterrupt  # as the early interrupt does, in `_started.wait()`
            super().start()

    monkeypatch.setattr(interrupts.threading, "Timer", EarlyTimer)
    with pytest.raises(KeyboardInterrupt):
        with redelivered():
            _drop_an_interrupt()
            _spin()
    assert len(started) == 2


def test_other_unraisable_errors_and_the_hook_are_left_as_they_were(monkeypatch):
    heard: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: heard.append(u.exc_type))
    before = sys.unraisablehook
    with redelivered():
        ref = weakref.ref(_Referent(), lambda _: 1 / 0)  # noqa: F841 - its callback runs at once
    assert heard == [ZeroDivisionError]
    assert sys.unraisablehook is before


def test_capture_stops_on_an_interrupt_dropped_mid_compile():
    def backend(graph_module, example_inputs):
        _drop_an_interrupt()  # in the middle of the compile, as in a fake tensor's WeakSet
        _spin()
        return graph_module.forward

    before = sys.unraisablehook
    with pytest.raises(KeyboardInterrupt):
        with compilescope.capturing() as cap:
            torch.compile(lambda a: a.cos() + 1, backend=backend)(torch.randn(4))
    assert cap.capture.partial == "KeyboardInterrupt raised before the code finished"
    assert sys.unraisablehook is before
