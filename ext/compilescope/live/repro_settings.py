"""compilescope's own settings kept out of the runnable repros torch writes during a capture."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping

# torch logs a runnable script of each graph it lowers (the fx_graph_runnable artifact,
# torch/_inductor/compile_fx.py -> torch/_dynamo/repro/after_aot.py save_graph_repro) that opens
# with the process's settings as Python: every TORCH/DYNAMO/INDUCTOR/TRITON environment variable
# (torch/_dynamo/debug_utils.py, generate_env_vars_string) and every config setting that is not
# at its default (generate_config_string -> ConfigModule.codegen_config,
# torch/utils/_config_module.py), except the keys in the config module's `_save_config_ignore`
# (torch 2.11 and 2.13). A capture's own settings are left out there, at the source: the script
# is the user's program, and a hook object is written as `<... object at 0x...>`, a SyntaxError.
_IGNORE = "_save_config_ignore"


@contextlib.contextmanager
def left_out_of_repros(config_module: object, keys: Iterable[str]) -> Iterator[None]:
    """While inside, torch's repros leave out these settings of `config_module` (dotted keys,
    `trace.provenance_tracking_level`); the module's ignore list is restored afterwards."""
    ignored = getattr(config_module, _IGNORE, None)
    added = [key for key in keys if ignored is not None and key not in ignored]
    if ignored is None or not added:  # a torch without the list: nothing to leave out
        yield
        return
    # The list is itself a setting of the module (install_config_module makes every value an
    # entry), and a changed setting is written into the repro: so it leaves itself out too.
    held = [*ignored, *added] + ([] if _IGNORE in ignored else [_IGNORE])
    # torch's patch puts the list back as it was (torch/utils/_config_module.py).
    with config_module.patch({_IGNORE: type(ignored)(held)}):  # type: ignore[attr-defined]
        yield  # dynamo's list is a set, inductor's and functorch's are lists


# Environment variables compilescope changes during a capture: name -> (before, during).
_env_changes: dict[str, tuple[str | None, str]] = {}


@contextlib.contextmanager
def env_changed(
    before: Mapping[str, str | None], during: Mapping[str, str | None]
) -> Iterator[None]:
    """Declare the environment variables the capture changed (read back in `repro_as_users`)."""
    changes = {
        name: (before.get(name), value)
        for name, value in during.items()
        if value is not None and value != before.get(name)
    }
    _env_changes.update(changes)
    try:
        yield
    finally:
        for name in changes:
            _env_changes.pop(name, None)


def _env_line(name: str, value: str) -> str:
    # As generate_env_vars_string writes it (torch/_dynamo/debug_utils.py).
    return f"""os.environ['{name}'] = '{value.replace("'", '"')}'"""


def repro_as_users(repro: str) -> str:
    """A repro's environment lines as they were before the capture changed them.

    torch reads the environment when it writes the script, and there is no ignore list for it;
    the capture's fresh cache folder (live/torch_bridge.py, _fresh_cache) is ours, not the
    user's, so each of our lines is put back to the user's value, or removed where there was
    none. Config settings need no such rewrite: `left_out_of_repros` keeps them out at the
    source. A line the user set to the same value is not ours and stays.
    """
    if not _env_changes:
        return repro
    swaps = {
        _env_line(name, during): "" if before is None else _env_line(name, before)
        for name, (before, during) in _env_changes.items()
    }
    kept = []
    for line in repro.split("\n"):
        if line not in swaps:
            kept.append(line)
        elif swaps[line]:  # the user's own value, where they had one
            kept.append(swaps[line])
    return "\n".join(kept)
