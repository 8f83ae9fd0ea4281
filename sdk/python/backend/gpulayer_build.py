"""The package's build backend (PEP 517), in the source tree.

PROTOCOL.md installs the SDK with no index into a fresh virtual
environment: ``pip install --no-index --no-build-isolation ./sdk/python``.
Such an environment has whatever setuptools its Python came with, and no
``wheel``: setuptools older than 70.1 cannot build a wheel without it,
and Python 3.12's venv has no setuptools at all. This backend builds
with setuptools where setuptools can build a wheel, and otherwise builds
the wheel itself with the standard library: the package is pure Python
with no dependencies, so a wheel is the package's files, its metadata
and a record of both, zipped.

The metadata the plain builder writes is pyproject.toml's, kept below
(PROJECT); tests/test_build_backend.py checks the two agree and that
the wheel installs and imports.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "gpulayer"
SOURCE = ROOT / "src" / PACKAGE

# pyproject.toml's [project] table, as the plain builder writes it.
PROJECT = {
    "name": "gpulayer",
    "description": "Python client of GpuLayer, a GPU job runtime: submit jobs, follow their logs, wait for results",
    "requires-python": ">=3.9",
    "keywords": ["gpu", "jobs", "scheduler", "cluster", "cuda", "client"],
    "author": "The GpuLayer authors",
    "classifiers": [
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "Intended Audience :: System Administrators",
        "Operating System :: OS Independent",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: System :: Distributed Computing",
        "Typing :: Typed",
    ],
}


def _setuptools_reads_pyproject():
    """Whether the environment has a setuptools that reads pyproject.toml's
    [project] table: 61 or later (Python 3.9's venv brings 58, which
    would build a nameless, empty wheel)."""
    try:
        import setuptools
    except ImportError:
        return False
    m = re.match(r"(\d+)", getattr(setuptools, "__version__", ""))
    return bool(m) and int(m.group(1)) >= 61


def _setuptools_builds_wheels():
    """Whether the environment's setuptools can build this wheel: 61 or
    later, and 70.1 and later carry bdist_wheel while older ones need the
    wheel package."""
    if not _setuptools_reads_pyproject():
        return False
    try:
        from setuptools.command import bdist_wheel  # noqa: F401

        return True
    except ImportError:
        pass
    try:
        import wheel  # noqa: F401

        return True
    except ImportError:
        return False


def _setuptools_backend():
    from setuptools import build_meta

    return build_meta


def version():
    """The package's version, from src/gpulayer/_version.py."""
    text = (SOURCE / "_version.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if not m:
        raise RuntimeError("src/gpulayer/_version.py has no __version__")
    return m.group(1)


def metadata():
    """The METADATA (core metadata 2.1) the plain builder writes."""
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + PROJECT["name"],
        "Version: " + version(),
        "Summary: " + PROJECT["description"],
        "Author: " + PROJECT["author"],
        "Keywords: " + ",".join(PROJECT["keywords"]),
        "Requires-Python: " + PROJECT["requires-python"],
    ]
    lines += ["Classifier: " + c for c in PROJECT["classifiers"]]
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def _package_files():
    """The package's files, as (path in the archive, path on disk)."""
    out = []
    for path in sorted(SOURCE.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".typed") and "__pycache__" not in path.parts:
            out.append((PACKAGE + "/" + path.relative_to(SOURCE).as_posix(), path))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def plain_wheel(wheel_directory):
    """Builds the wheel with the standard library; returns its name."""
    dist = "%s-%s" % (PACKAGE, version())
    name = dist + "-py3-none-any.whl"
    info = dist + ".dist-info"
    files = [(arc, path.read_bytes()) for arc, path in _package_files()]
    files.append((info + "/METADATA", metadata().encode("utf-8")))
    files.append((info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: gpulayer_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((info + "/top_level.txt", (PACKAGE + "\n").encode()))
    record = "\n".join(_record_line(arc, data) for arc, data in files) + "\n" + info + "/RECORD,,\n"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        z.writestr(zipfile.ZipInfo(info + "/RECORD", date_time=(1980, 1, 1, 0, 0, 0)), record, zipfile.ZIP_DEFLATED)
    return name


def plain_sdist(sdist_directory):
    """Builds the source archive with the standard library; returns its
    name."""
    dist = "%s-%s" % (PACKAGE, version())
    name = dist + ".tar.gz"
    members = [("pyproject.toml", ROOT / "pyproject.toml"), ("README.md", ROOT / "README.md"),
               ("MANIFEST.in", ROOT / "MANIFEST.in"), ("backend/gpulayer_build.py", Path(__file__).resolve())]
    members += [("src/" + arc, path) for arc, path in _package_files()]
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        pkg_info = metadata().encode("utf-8")
        ti = tarfile.TarInfo(dist + "/PKG-INFO")
        ti.size, ti.mode = len(pkg_info), 0o644
        tar.addfile(ti, io.BytesIO(pkg_info))
        for arc, path in members:
            data = path.read_bytes()
            ti = tarfile.TarInfo(dist + "/" + arc)
            ti.size, ti.mode = len(data), 0o644
            tar.addfile(ti, io.BytesIO(data))
    return name


# The PEP 517 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if _setuptools_builds_wheels():
        return _setuptools_backend().build_wheel(wheel_directory, config_settings, metadata_directory)
    return plain_wheel(wheel_directory)


def build_sdist(sdist_directory, config_settings=None):
    if not _setuptools_reads_pyproject():
        return plain_sdist(sdist_directory)
    return _setuptools_backend().build_sdist(sdist_directory, config_settings)
