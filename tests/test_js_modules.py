"""The view's JavaScript: ES modules in ext/compilescope/static, bundled by esbuild into static/dist.

No browser: the committed bundles are what esbuild builds from the sources today (rebuilt into a
temporary folder with package.json's flags), no module leaks a global `cs*` name, and every
name a module imports is exported by the module it names.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "ext" / "compilescope" / "static"
DIST = STATIC / "dist"
BUNDLES = ("result.js", "explorer.js", "report.js")
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"

NAME = r"[A-Za-z_$][\w$]*"
IMPORT = re.compile(
    r"^import\s+(?:(" + NAME + r")\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s*[\"']([^\"']+)[\"'];", re.M
)
EXPORT_DECL = re.compile(
    r"^export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+(" + NAME + ")", re.M
)
EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}", re.M)
TOP_LEVEL_CS = re.compile(
    r"^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+cs", re.M
)


def sources() -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(STATIC.glob("*.js"))}


def exports(text: str) -> set[str]:
    names = set(EXPORT_DECL.findall(text))
    for group in EXPORT_LIST.findall(text):
        names |= {part.split(" as ")[-1].strip() for part in group.split(",") if part.strip()}
    if re.search(r"^export\s+default\b", text, re.M):
        names.add("default")
    return names


def imports(text: str) -> list[tuple[str, str]]:
    """(module, name) for each name imported; a default import is the name "default"."""
    out = []
    for default, group, module in IMPORT.findall(text):
        if default:
            out.append((module, "default"))
        for part in (group or "").split(","):
            if part.strip():
                out.append((module, part.split(" as ")[0].strip()))
    return out


def test_sources_are_modules_without_globals():
    files = sources()
    assert {
        "dom.js",
        "format.js",
        "entry_result.js",
        "entry_explorer.js",
        "entry_report.js",
    } <= set(files)
    for name, text in files.items():
        assert not TOP_LEVEL_CS.search(text), f"{name} declares a top-level cs* name"
        assert not re.search(r"\bwindow\.cs|\bglobalThis\.", text), f"{name} sets a global"
        if not name.startswith("entry_"):
            assert exports(text), f"{name} exports nothing"
        # Every import statement is one the pattern reads (nothing slips past the check below).
        statements = re.findall(r"^import\b[^;]*;", text, re.M)
        assert len(statements) == len(IMPORT.findall(text)), (name, statements)


def test_every_import_is_exported_by_its_module():
    files = sources()
    used: dict[str, set[str]] = {name: set() for name in files}
    for name, text in files.items():
        for module, imported in imports(text):
            assert module.startswith("./") and module.endswith(".js"), (name, module)
            target = module[2:]
            assert target in files, f"{name} imports {module}, which does not exist"
            assert imported in exports(files[target]), (
                f"{name}: {target} does not export {imported}"
            )
            used[target].add(imported)
    # And nothing is exported that no module uses (the entries' default exports are anywidget's).
    for name, text in files.items():
        if not name.startswith("entry_"):
            assert exports(text) <= used[name], (name, exports(text) - used[name])


def test_bundles_define_no_cs_functions():
    for name in BUNDLES:
        text = (DIST / name).read_text("utf-8")
        assert not re.search(r"^function cs", text, re.M), name
        # Inlined in the report's <script>: nothing in it may end the element or open a comment.
        assert "</script" not in text.lower() and "<!--" not in text, name
        # The widgets' bundles are anywidget modules (a default export); the report's runs alone.
        default = re.search(r"^export \{\s*\w+ as default\s*\};", text, re.M)
        assert bool(default) == (name != "report.js"), name


def esbuild() -> Path:
    """node_modules/.bin/esbuild, installed by `npm ci` from package-lock.json if missing."""
    if ESBUILD.exists():
        return ESBUILD
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot rebuild static/dist to compare (make setup-js)")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=ROOT, check=True, capture_output=True
    )
    assert ESBUILD.exists(), "npm ci did not install esbuild"
    return ESBUILD


def test_dist_is_built_from_the_sources(tmp_path):
    """`make js` was run after the last change to static/*.js (same flags: package.json's)."""
    command = shlex.split(json.loads((ROOT / "package.json").read_text())["scripts"]["build"])
    assert command[0] == "esbuild"
    outdir = [a for a in command if a.startswith("--outdir=")]
    assert outdir == ["--outdir=ext/compilescope/static/dist"], outdir
    args = [a if not a.startswith("--outdir=") else f"--outdir={tmp_path}" for a in command[1:]]
    subprocess.run([str(esbuild()), *args], cwd=ROOT, check=True, capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(BUNDLES)
    assert sorted(p.name for p in DIST.iterdir()) == sorted(BUNDLES)
    for name in BUNDLES:
        built = (tmp_path / name).read_bytes()
        assert built == (DIST / name).read_bytes(), f"static/dist/{name} is stale: run `make js`"
