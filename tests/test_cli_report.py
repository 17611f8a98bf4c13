"""`python -m compilescope report|summary|ranks` on a log, a folder of ranks and a saved capture;
--help, --version, exit codes and errors as a shell user expects them."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from compilescope import __version__, load_trace, write_rank
from conftest import FIXTURES


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilescope", *args], capture_output=True, text=True, cwd=cwd
    )


def rank_folder(tmp_path):
    """A folder of write_rank captures of the recorded 2-rank DDP job."""
    folder = tmp_path / "ranks"
    logged = load_trace(FIXTURES / "ranks_ddp")
    for rank in logged.ranks:
        write_rank(replace(logged.rank(rank), world_size=2, rank_logs=()), folder)
    return folder


def saved_capture(tmp_path):
    out = run("summary", str(FIXTURES / "graph_break.log.gz"), "--json", str(tmp_path / "c.json"))
    assert out.returncode == 0, out.stderr
    return tmp_path / "c.json"


def test_report_of_a_log_writes_one_offline_html_file(tmp_path):
    out = run("report", str(FIXTURES / "graph_break.log.gz"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    page = tmp_path / "compilescope_report.html"  # the default name, where it ran
    assert f"wrote {page}" in out.stdout and "3 compile ids" in out.stdout
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "cs-data" in html
    assert "<script src=" not in html and "<link" not in html  # nothing to fetch


def test_report_of_a_log_imports_no_heavy_library(tmp_path):
    """`report LOG` is to be as fast as tlparse on the GPT-2 log (issue 34): a fresh process
    each time, so what it imports counts. No torch, numpy, sympy, matplotlib, pandas or the
    notebook stack (each 40 ms to seconds), nor the code of the other commands and views."""
    code = (
        "import sys\n"
        "from compilescope.__main__ import main\n"
        f"assert main(['report', {str(FIXTURES / 'gpt2.log.gz')!r}, '-o', "
        f"{str(tmp_path / 'gpt2.html')!r}]) == 0\n"
        # The cycle collector stays on: no switch of ours (it bought 2-3%, within noise).
        "import gc; assert gc.isenabled()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('compilescope.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    roots, ours = (set(eval(line)) for line in out.stdout.strip().splitlines()[-2:])
    heavy = {"torch", "numpy", "sympy", "matplotlib", "pandas", "IPython", "ipywidgets",
             "anywidget", "triton"}  # fmt: skip
    assert roots & heavy == set()
    # The folder report's code, the diff of two captures and a fix trial's model; what a log
    # of one rank does not hold (measured times, held memory: live captures) or need (the
    # rank comparison, rank files, a DDP split, the text summary).
    unused = {"compilescope.report_job", "compilescope.model.diff",
              "compilescope.model.findings.fix_trial", "compilescope.views.offline.report_index",
              "compilescope.model.measured.timing", "compilescope.model.measured.held_memory",
              "compilescope.model.ranks.report", "compilescope.model.ranks.compare",
              "compilescope.model.ranks.records", "compilescope.trace.rank_files",
              "compilescope.model.ddp", "compilescope.model.summary"}  # fmt: skip
    assert ours & unused == set()
    assert "cs-data" in (tmp_path / "gpt2.html").read_text()


def test_report_of_a_rank_folder_holds_the_rank_report(tmp_path):
    out = run("report", str(rank_folder(tmp_path)), "-o", str(tmp_path / "job.html"))
    assert out.returncode == 0, out.stderr
    assert "ranks: diverged" in out.stdout
    html = (tmp_path / "job.html").read_text()
    assert "data-status=\\u0027diverged\\u0027" in html or "data-status='diverged'" in html
    assert "parts from rank 0" in html


def test_report_of_a_saved_capture(tmp_path):
    saved = saved_capture(tmp_path)
    out = run("report", str(saved), "-o", str(tmp_path / "saved.html"))
    assert out.returncode == 0, out.stderr
    assert "graph break" in (tmp_path / "saved.html").read_text()


def test_ranks_and_summary_read_rank_folders_and_saved_captures(tmp_path):
    folder = rank_folder(tmp_path)
    ranks = run("ranks", str(folder))
    assert ranks.returncode == 1 and "rank 1 parts from rank 0" in ranks.stdout, ranks.stderr
    summary = run("summary", str(folder))
    assert summary.returncode == 0 and "rank1:0/1" in summary.stdout, summary.stderr
    saved = saved_capture(tmp_path)
    assert "3 compile ids" in run("summary", str(saved)).stdout
    assert run("ranks", str(saved)).stdout.endswith("fewer than two ranks\n")
    # A saved capture of several ranks (summary --json of a rank folder) compares the same.
    run("summary", str(folder), "--json", str(tmp_path / "job.json"))
    again = run("ranks", str(tmp_path / "job.json"))
    assert again.returncode == 1 and "rank 1 parts from rank 0 at compile 0/1" in again.stdout


def test_help_lists_examples_and_exit_codes_and_version():
    out = run("--help")
    assert out.returncode == 0
    for text in ("report", "summary", "ranks", "examples:", "exit codes:", "--open"):
        assert text in out.stdout, text
    assert "3  `ranks`: a rank's record is incomplete" in out.stdout
    assert "exit codes:" in run("ranks", "--help").stdout
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"compilescope {__version__}"


@pytest.mark.parametrize("command", ["report", "summary", "ranks"])
def test_errors_go_to_stderr_and_name_the_path(tmp_path, command):
    missing = run(command, str(tmp_path / "no_such_trace"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert "no_such_trace" in missing.stderr and missing.stderr.startswith("compilescope: ")
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "compilescope.capture", "version": 1, "compiles": 3}')
    out = run(command, str(bad))
    assert out.returncode == 2 and "broken.json" in out.stderr and "compiles" in out.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run(command, str(empty))
    assert out.returncode == 2 and "empty" in out.stderr and "no TORCH_TRACE logs" in out.stderr


def test_report_json_of_ranks_says_the_status(tmp_path):
    out = run("ranks", str(FIXTURES / "ranks_gpu" / "agree"), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["status"] == "agree" and data["gaps"] == []


@pytest.mark.parametrize("columns", ["", "40", "123"])
def test_help_is_laid_out_as_argparse_would_without_importing_shutil(monkeypatch, columns):
    """__main__ sizes argparse's help itself (argparse's formatter imports shutil, and with it
    bz2 and lzma, on every argument added: issue 34); the help reads the same as argparse's."""
    import argparse

    import compilescope.__main__ as cli

    monkeypatch.setenv("COLUMNS", columns)

    def helps() -> list[str]:
        parser = cli._parser()
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return [parser.format_help(), *(p.format_help() for p in commands.choices.values())]

    ours = helps()
    monkeypatch.setattr(cli, "_Help", argparse.HelpFormatter)
    monkeypatch.setattr(cli, "_RawHelp", argparse.RawDescriptionHelpFormatter)
    assert ours == helps()
