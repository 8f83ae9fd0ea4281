"""The in-tree build backend (backend/gpulayer_build.py): the wheel it
builds with the standard library alone, where the environment's
setuptools cannot build one, holds the package and metadata that agree
with pyproject.toml, its record's hashes are right, and the package
imports from it. (pip installing it is make test-python's part: it runs
PROTOCOL.md's install command in a venv with no wheel package.)"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

from . import modload

ROOT = Path(__file__).resolve().parents[1]


def _backend():  # type: ignore[no-untyped-def]
    return modload.load("gpulayer_build", ROOT / "backend" / "gpulayer_build.py")


class BuildBackendTest(unittest.TestCase):
    def test_metadata_is_pyprojects(self) -> None:
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib is Python 3.11's")
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        kept = _backend().PROJECT
        for key in ("name", "description", "requires-python", "keywords", "classifiers"):
            self.assertEqual(kept[key], project[key], key)
        self.assertEqual(kept["author"], project["authors"][0]["name"])
        self.assertEqual(project["dependencies"], [], "the plain wheel declares no dependencies")

    def test_plain_wheel_holds_the_package_and_imports_from_it(self) -> None:
        b = _backend()
        with tempfile.TemporaryDirectory() as d:
            name = b.plain_wheel(d)
            self.assertEqual(name, "gpulayer-%s-py3-none-any.whl" % b.version())
            path = Path(d) / name
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
                info = "gpulayer-%s.dist-info/" % b.version()
                for want in ("gpulayer/__init__.py", "gpulayer/client.py", "gpulayer/py.typed", info + "METADATA", info + "WHEEL", info + "RECORD"):
                    self.assertIn(want, names)
                meta = z.read(info + "METADATA").decode()
                self.assertIn("Name: gpulayer\n", meta)
                self.assertIn("Version: %s\n" % b.version(), meta)
                record = z.read(info + "RECORD").decode().splitlines()
                self.assertEqual(len(record), len(names))
                for line in record:
                    arc, digest, size = line.rsplit(",", 2)
                    if arc == info + "RECORD":
                        continue
                    data = z.read(arc)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual(digest, "sha256=" + want, arc)
                    self.assertEqual(int(size), len(data), arc)
            # The package imports from the wheel alone (a pure-Python wheel
            # is importable as a zip), in a fresh interpreter.
            out = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); import gpulayer; print(gpulayer.Client.__name__)" % str(path)],
                                 capture_output=True, text=True, check=True)
            self.assertEqual(out.stdout.strip(), "Client")

    def test_plain_sdist(self) -> None:
        b = _backend()
        with tempfile.TemporaryDirectory() as d:
            name = b.plain_sdist(d)
            with tarfile.open(Path(d) / name) as tar:
                names = set(tar.getnames())
            dist = "gpulayer-%s/" % b.version()
            for want in ("PKG-INFO", "pyproject.toml", "backend/gpulayer_build.py", "src/gpulayer/__init__.py"):
                self.assertIn(dist + want, names)


if __name__ == "__main__":
    unittest.main()
