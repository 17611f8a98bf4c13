"""A Ctrl-C that Python dropped inside a weakref callback or finalizer is delivered again."""

from __future__ import annotations

import _thread
import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

_AGAIN_AFTER_S = 0.01  # enough for the main thread to leave the hook; nothing a person notices


def _deliver_again() -> None:
    """As if SIGINT arrived a little later: the handler in force (Python's, or the kernel's)
    raises. On a busy machine the timer's thread can fire before `start()` returns (it waits for
    the thread to run): the interrupt is then raised here, still inside the hook, where it would
    be lost again (a clean-clone run, 2 busy cores). Caught, it is delivered once more."""
    while True:
        try:
            threading.Timer(_AGAIN_AFTER_S, _thread.interrupt_main).start()
            return
        except KeyboardInterrupt:
            continue


@contextlib.contextmanager
def redelivered() -> Iterator[None]:
    """Inside, a KeyboardInterrupt raised where Python cannot pass it on interrupts the main
    thread again, 10 ms later.

    Python runs the SIGINT handler in whatever frame the main thread is in. During a compile
    that is at times a weakref callback (a WeakSet's `_remove` for torch's fake tensors, met
    by 3 of 280 interrupts 0.2-0.6 s into a Dynamo trace of 3,000 ops). An exception there
    cannot propagate: Python prints "Exception ignored in", drops it, and the compile runs on
    to its end, with the user's interrupt lost. Delivered again, it is raised in an ordinary
    frame; should that be another callback, this hook delivers it once more.

    Again a few milliseconds later, from a thread: delivered at once, the main thread would
    take it before leaving this hook, which cannot pass it on either.
    """
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _deliver_again()
            return
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        if sys.unraisablehook is hook:  # whoever replaced it inside keeps theirs
            sys.unraisablehook = previous
