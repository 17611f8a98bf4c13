"""The kernel tests run on CPU tensors through Triton's interpreter (TRITON_INTERPRET=1)."""

from __future__ import annotations

import importlib
import types

import pytest


@pytest.fixture(autouse=True)
def kernels(monkeypatch) -> types.SimpleNamespace:
    """The kernel modules, imported (once) with TRITON_INTERPRET=1.

    The variable is set for these tests only, not for the whole session: the notebook tests run
    kernels that must set it themselves, as they must on Binder. Triton reads it when a kernel
    is decorated (at the module's first import) and again when the interpreter starts.
    """
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from triton.runtime import JITFunction

    names = ("softmax", "layer_norm", "matmul", "ops")
    mods = {n: importlib.import_module(f"compilescope_kernels.{n}") for n in names}
    if isinstance(mods["softmax"].softmax_kernel, JITFunction):
        pytest.fail("compilescope_kernels was imported before TRITON_INTERPRET=1 was set")
    return types.SimpleNamespace(**mods)
