"""JupyterLab's own page errors (browser/conftest.py) are reported as warnings; any other error
on a page stays in `page.errors`, where a test fails on it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from browser.conftest import LAB_OWN_ERRORS, record_page_error


def test_labs_own_error_is_reported_not_kept():
    (text,) = LAB_OWN_ERRORS
    page = SimpleNamespace(errors=[])
    with pytest.warns(UserWarning, match="JupyterLab's own error on the page: Error: Canceled"):
        record_page_error(page, f"Error: {text}")
    assert page.errors == []


def test_any_other_error_is_kept():
    page = SimpleNamespace(errors=[])
    record_page_error(page, "TypeError: Cannot read properties of undefined (reading 'nodes')")
    # A cancelled future of another message is not Lab's subshell request: kept too.
    record_page_error(page, "Error: Canceled future for execute_request message before replies")
    assert len(page.errors) == 2
