"""A real `jupyter lab` on 127.0.0.1 and Debian's Chromium driven by Playwright, started here."""

from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
# What the probe of these machines found necessary: no sandbox as root, and no background
# networking (the closed network refuses it, many connections at a time).
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


PATIENCE_MS = 90_000  # Playwright's waits; its default is 30 s

# Playwright takes `inspect.stack()` on every call. For a frame whose file does not exist, such
# as pytest-xdist's worker code, run from a string in `__main__`, inspect looks for its module
# through every module loaded (4,000 with torch) unless its cache names it: 2,100 calls took
# 23 s of the browser tests' time without this entry.
inspect.modulesbyfile.setdefault("<string>", "__main__")


def artifacts() -> Path:
    """The folder screenshots go to (tests/artifacts/, ignored by git), made when first asked."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make setup-browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # `make test` runs these beside another worker's compiles: JupyterLab can take longer
        # than Playwright's default 30 s to make a cell clickable while both cores are busy.
        new_context = b.new_context

        def patient_context(*args, **kwargs):
            context = new_context(*args, **kwargs)
            context.set_default_timeout(PATIENCE_MS)
            return context

        b.new_context = patient_context
        yield b
        b.close()


# JupyterLab's own uncaught errors, each with how it arises: reported in the run's warnings and
# kept out of `page.errors`, which holds every other error on the page (ours would be there).
LAB_OWN_ERRORS = {
    "Canceled future for create_subshell_request message before replies were done": (
        "Lab 4.6 sends widgets' comms over a kernel subshell (its default) and leaves the "
        "subshell request uncaught when it drops a kernel connection: in 2 of 5 clean clones "
        "on 2 busy cores, each time on the first notebook Lab opened on its server, as Lab "
        "started a second kernel for it and shut down the one its session had (server log)"
    ),
}


def record_page_error(pg, error: object) -> None:
    """Keep `error` in `pg.errors`, unless it is one of JupyterLab's own: then say so."""
    message = str(error)
    why = next((why for text, why in LAB_OWN_ERRORS.items() if text in message), None)
    if why is None:
        pg.errors.append(message)
    else:
        warnings.warn(f"JupyterLab's own error on the page: {message} ({why})", stacklevel=1)


@pytest.fixture
def page(browser, request):
    """A fresh page that records page errors and any alert/confirm/prompt (none may happen)."""
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = context.new_page()
    pg.errors, pg.dialogs = [], []
    pg.on("pageerror", lambda e: record_page_error(pg, e))
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=False)
    except Exception:  # a screenshot is a by-product; the test's own result stands
        pass
    context.close()


def server_api(server: dict, route: str, body: dict | None = None):
    """The Jupyter server's REST API at `route`: a POST of `body`, or a GET without one; the
    answer's JSON."""
    request = urllib.request.Request(
        f"{server['base']}/api/{route}?token={server['token']}",
        data=json.dumps(body).encode() if body else None,
        headers={"Content-Type": "application/json"},
        method="POST" if body else "GET",
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)


def open_notebook(page, server: dict, where: str, name: str) -> None:
    """Open notebook `name` (in the server's folder) at `where` (`lab/tree`,
    `lab/workspaces/W/tree` or `notebooks`), with its kernel started first through the server's
    sessions API: Lab connects to it, as to a notebook whose kernel is running.

    Left to start the kernel itself, Lab sometimes opened its "Select Kernel" dialog over the
    notebook though the kernel it names is installed (3 runs of about 15 on 2 busy cores; the
    server log shows the kernel started, so the choice was Lab's, in its page). A running
    session is found by path before Lab would start or choose anything; should Lab still ask,
    `answer_select_kernel` answers."""
    import nbformat
    from notebooks.kernel import KERNEL_NAME

    spec = nbformat.read(server["dir"] / name, as_version=4).metadata.get("kernelspec", {})
    server_api(server, "sessions", {"path": name, "type": "notebook", "name": name,
                                    "kernel": {"name": spec.get("name", KERNEL_NAME)}})  # fmt: skip
    answer_select_kernel(page, name)
    page.goto(f"{server['base']}/{where}/{name}?token={server['token']}")


def answer_select_kernel(page, name: str) -> None:
    """Should Lab still ask which kernel to use, answer with the kernel started for `name`, and
    say so in the run's warnings (the dialog is Lab's, not ours; a test of our views waits for
    none of it). Seen after the sessions API start too (1 full run in 5, on 2 busy cores), the
    dialog listing the running kernel Lab had not connected to."""
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")

    def choose() -> None:
        warnings.warn(
            f"JupyterLab asked which kernel to use for {name} though its session was running; "
            "the test chose that session's kernel",
            stacklevel=1,
        )
        select = dialog.locator("select")
        # Lab fills the running sessions' options after it shows the dialog: accepted before,
        # it started a new kernel instead (a clean-clone run failed on the kernel's id).
        ours: list[str] = []
        for _ in range(50):
            texts = select.locator("option").all_inner_texts()
            ours = [t for t in texts if t.startswith(f"{name} (")]
            if ours:
                break
            page.wait_for_timeout(100)
        if ours:
            select.select_option(label=ours[0])
        dialog.locator("button.jp-mod-accept").click()

    # Playwright calls it whenever the dialog is visible before an action or an assertion.
    page.add_locator_handler(dialog, choose)


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory):
    """`jupyter lab` on 127.0.0.1 with its own config, data and settings; stopped at the end."""
    from notebooks.kernel import install_kernelspec

    root = tmp_path_factory.mktemp("lab")
    home = root / "home"
    (home / "notebooks").mkdir(parents=True)
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No news popup over the page.
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    install_kernelspec(root / "kernels")
    port, token = _free_port(), "compilescope-test-token"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    # The server's log, and its kernels' (they inherit its stderr), go to a file kept with the
    # run's temporary folders, to read the server's side when a test fails. (They went to a pipe
    # nobody read, which would have stopped the server at 64 KiB; a whole run writes 5-7 KiB.)
    log = root / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home / 'notebooks'}",
             "--ServerApp.disable_check_xsrf=True"],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(log.read_text(errors="replace")) from None
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("jupyter lab did not start within 90 s")
    yield {"base": base, "token": token, "dir": home / "notebooks"}
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
