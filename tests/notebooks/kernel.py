"""A Jupyter kernel of this very Python (its venv's compilescope), for nbclient and jupyter_client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

KERNEL_NAME = "compilescope-test"


def install_kernelspec(root: Path) -> None:
    """Write a kernelspec under `root` and put `root` first on JUPYTER_PATH."""
    spec = root / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "compilescope test",
                "language": "python",
            }
        )
    )
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(root), os.environ.get("JUPYTER_PATH", "")])
