"""The package itself: its version, and the frameworks imported only where used."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from conftest import REPOSITORY


def test_the_version_is_the_extension_s() -> None:
    package = tomllib.loads((REPOSITORY / "clients/python/pyproject.toml").read_text())["project"]["version"]
    extension = tomllib.loads((REPOSITORY / "Cargo.toml").read_text())["package"]["version"]
    assert package == extension


def test_import_pg_chunk_needs_no_framework() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, pg_chunk; print(sorted({m.split('.')[0] for m in sys.modules}))"],
        check=True, capture_output=True, text=True).stdout
    assert "langchain_core" not in loaded and "llama_index" not in loaded and "pg_chunk" in loaded
