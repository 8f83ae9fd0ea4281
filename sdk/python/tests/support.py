"""A real `gpulayer dev` for the tests, started once per test run.

The binary is $GPULAYER_BIN (make test-python builds it), else it is
built from the repository with `go build` into a temporary directory.
dev listens on a free loopback port and writes its address and admin
token to an env file; readiness is polled (the env file, then a ready
worker with GPUs), never slept for.

As root, dev runs as the user `nobody` (65534), from a copy of the
binary in a directory of its own: dev then runs tasks as that user
instead of claiming the host's task uid range, which another agent on
the machine may hold (dev has no flag to move it yet).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Callable, Dict, Optional, TypeVar

import gpulayer

REPO = Path(__file__).resolve().parents[3]
NOBODY = 65534
T = TypeVar("T")


def poll(what: str, check: Callable[[], Optional[T]], timeout: float = 30.0, every: float = 0.05) -> T:
    """Calls check until it answers something other than None or False,
    and returns that; fails the test past timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got is not None and got is not False:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)


def binary() -> str:
    """The gpulayer binary the tests run."""
    given = os.environ.get("GPULAYER_BIN")
    if given:
        return given
    out = Path(tempfile.mkdtemp(prefix="gpulayer-py-bin-")) / "gpulayer"
    atexit.register(shutil.rmtree, out.parent, True)
    subprocess.run(["go", "build", "-o", str(out), "./cmd/gpulayer"], cwd=REPO, check=True)
    return str(out)


class Dev:
    """One `gpulayer dev` process."""

    def __init__(self, gpulayer_bin: str) -> None:
        self.bin = gpulayer_bin
        self.dir = tempfile.mkdtemp(prefix="gpulayer-py-dev-")
        self.log_path = os.path.join(self.dir, "dev.log")
        self.addr = ""
        self.token = ""
        self._proc: Optional[subprocess.Popen] = None

    def start(self, timeout: float = 90.0) -> None:
        env_file = os.path.join(self.dir, "env")
        # Every flag of dev also reads GPULAYER_<FLAG>: none from outside.
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPULAYER_")}
        env["TMPDIR"] = self.dir
        as_user: Dict[str, object] = {}
        exe = self.bin
        if os.geteuid() == 0:
            # nobody may not reach the checkout (a home directory, say):
            # it runs a copy of the binary from a directory of its own.
            exe = os.path.join(self.dir, "gpulayer")
            shutil.copy2(self.bin, exe)
            os.chown(self.dir, NOBODY, NOBODY)
            as_user = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
        cmd = [exe, "dev", "--http-addr", "127.0.0.1:0", "--env-file", env_file,
               "--fake-gpus", "dgxh100", "--log-level", "warn"]
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(  # type: ignore[call-overload]
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, **as_user)

        def env_ready() -> Optional[Dict[str, str]]:
            self._check_alive()
            try:
                lines = Path(env_file).read_text().splitlines()
            except FileNotFoundError:
                return None
            kv = dict(line.split("=", 1) for line in lines if "=" in line)
            return kv if "GPULAYER_ADDR" in kv and "GPULAYER_TOKEN" in kv else None

        kv = poll("gpulayer dev's env file", env_ready, timeout)
        self.addr, self.token = kv["GPULAYER_ADDR"], kv["GPULAYER_TOKEN"]
        admin = self.client()

        def worker_ready() -> bool:
            self._check_alive()
            return any(w.status == "ready" and w.devices for w in admin.workers.list())

        poll("dev's worker to be ready", worker_ready, timeout)

    def client(self, **kwargs: object) -> gpulayer.Client:
        return gpulayer.Client(self.addr, self.token, **kwargs)  # type: ignore[arg-type]

    def _check_alive(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            raise AssertionError(f"gpulayer dev exited with {self._proc.returncode}:\n{self.log()}")

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_dev: Optional[Dev] = None
_lock = threading.Lock()


def dev() -> Dev:
    """The shared dev coordinator, started on first use, stopped at exit."""
    global _dev
    with _lock:
        if _dev is None:
            d = Dev(binary())
            atexit.register(d.stop)
            d.start()
            _dev = d
        return _dev


class DevTestCase(unittest.TestCase):
    """A test case against the shared dev coordinator, as its admin."""

    dev: Dev
    gl: gpulayer.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.dev = dev()
        cls.gl = cls.dev.client()
