"""The package's version is the Go build's: the binary the tests run
reports GO_VERSION, the installed metadata says __version__, and the
committed _version.py is what tools/write_version.py makes of it."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import unittest
from pathlib import Path

import gpulayer

from . import modload, support

TOOL = Path(__file__).resolve().parents[1] / "tools" / "write_version.py"


def _tool():  # type: ignore[no-untyped-def]
    return modload.load("write_version", TOOL)


class VersionTest(unittest.TestCase):
    def test_binary_reports_the_same_version(self) -> None:
        out = subprocess.run([support.binary(), "version", "-o", "json"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(json.loads(out)["version"], gpulayer.GO_VERSION)

    def test_installed_metadata(self) -> None:
        self.assertEqual(importlib.metadata.version("gpulayer"), gpulayer.__version__)

    def test_committed_file_is_the_generated_one(self) -> None:
        done = subprocess.run([sys.executable, str(TOOL), "--check", gpulayer.GO_VERSION], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_python_spelling(self) -> None:
        tool = _tool()
        cases = {"dev": "0.0.0.dev0", "v1.2.3": "1.2.3", "1.2.3": "1.2.3", "v0.10.0-rc.2": "0.10.0rc2",
                 "v2.0.0-beta.1": "2.0.0b1", "v2.0.0-alpha1": "2.0.0a1"}
        for go, want in cases.items():
            with self.subTest(go):
                self.assertEqual(tool.python_version(go), want)
        for bad in ("", "v1.2", "v1.2.3-dirty", "latest"):
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    tool.python_version(bad)


if __name__ == "__main__":
    unittest.main()
