"""A fresh copy of the user's function or module forward, so Dynamo compiles it anew."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from . import torch_bridge


def fresh_entry(fn: Callable[..., object]) -> tuple[Callable[..., object], Callable[[], None]]:
    """A copy of `fn` with its own code object, so Dynamo's cache of earlier runs does not hit.

    Returns the callable to compile and a function that undoes any change made to `fn`.
    """
    if isinstance(fn, types.FunctionType):
        return copy_function(fn), lambda: None
    forward = getattr(type(fn), "forward", None)
    if torch_bridge.is_module(fn) and isinstance(forward, types.FunctionType):
        # Like torch.compile(module): compile `forward`, and let `module(...)` run its hooks
        # eagerly around it, by shadowing forward on the instance for this one call.
        had_own = "forward" in vars(fn)
        previous: Any = vars(fn).get("forward")  # the instance's own forward, if it had one

        def restore() -> None:
            if had_own:
                fn.forward = previous
            else:
                vars(fn).pop("forward", None)

        return fn, restore  # the caller installs the compiled forward
    raise TypeError(
        f"capture() compiles functions and nn.Modules; got {type(fn).__name__}. "
        "Wrap it: capture(lambda *a: obj(*a), ...)"
    )


def copy_function(fn: types.FunctionType) -> types.FunctionType:
    copy = types.FunctionType(
        fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy
