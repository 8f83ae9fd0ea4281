"""Jobs against a real `gpulayer dev`: submit, wait, result, get, list,
cancel, logs (whole and followed)."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from typing import List

import gpulayer
from gpulayer import JobSpec

from . import support
from .support import poll


class Gate:
    """A file a test job waits for: the job blocks until the test opens
    the gate, so the test decides when the job goes on."""

    def __init__(self, test: unittest.TestCase) -> None:
        self.dir = tempfile.mkdtemp(prefix="gpulayer-py-gate-")
        os.chmod(self.dir, 0o755)  # the task may run as another user
        self.path = os.path.join(self.dir, "open")
        test.addCleanup(shutil.rmtree, self.dir, True)
        test.addCleanup(self.open)  # never leave a job blocked

    def script(self, before: str, after: str) -> List[str]:
        """A command that prints before, waits for the gate, prints after."""
        return ["sh", "-c", f'echo {before}; while [ ! -e "$0" ]; do sleep 0.05; done; echo {after}', self.path]

    def open(self) -> None:
        with open(self.path, "w"):
            pass


class JobsTest(support.DevTestCase):
    def test_exec_into_a_running_task(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "echo ready; exec sleep 60"], name="py-exec"))
        self.addCleanup(self.gl.jobs.cancel, job.id)
        task = poll("the task to run", lambda: next((t for t in self.gl.jobs.get(job.id).tasks if t.state == "running"), None))
        poll("the task's output", lambda: any("ready" in e.data for e in self.gl.jobs.logs(job.id)))
        got = self.gl.tasks.exec(task.id, ["sh", "-c", "cat; echo err >&2; exit 3"], stdin=b"piped\n")
        self.assertEqual(got, gpulayer.ExecResult(stdout=b"piped\n", stderr=b"err\n", exit_code=3))
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.tasks.exec(task.id, ["x"] * 300)  # over the contract's argument bound
        self.assertEqual((e.exception.code, e.exception.status), ("invalid_argument", 400))

    def test_submit_wait_and_result(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "echo out; echo err >&2"], name="hello"))
        self.assertTrue(job.id)
        self.assertFalse(job.done)
        self.assertEqual(job.name, "hello")
        self.assertEqual(job.created_by, "admin")
        self.assertTrue(job.idempotency_key and job.idempotency_key.startswith("auto-"), job.idempotency_key)
        self.assertEqual(len(job.idempotency_key or ""), len("auto-") + 26)

        done = self.gl.jobs.wait(job.id, timeout=60)
        self.assertEqual(done.state, "succeeded")
        self.assertTrue(done.done and done.succeeded)
        self.assertEqual(done.exit_codes, [0])
        task = done.tasks[0]
        self.assertEqual(task.executed_by, "dev-worker")
        self.assertEqual([a.state for a in task.attempts], ["succeeded"])
        self.assertEqual(task.attempts[0].exit_code, 0)

    def test_failed_job_carries_its_exit_code(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "exit 3"]))
        done = self.gl.jobs.wait(job.id, timeout=60)
        self.assertEqual(done.state, "failed")
        self.assertEqual(done.exit_codes, [3])
        self.assertIn("exit code 3", done.tasks[0].reason or "")

    def test_events_list_the_history(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "exit 3"]))
        self.gl.jobs.wait(job.id, timeout=60)
        got = self.gl.jobs.events(job.id)
        self.assertIsInstance(got, gpulayer.JobEvents)
        self.assertEqual(got.job_id, job.id)
        self.assertFalse(got.truncated)
        kinds = [e.kind for e in got.events]
        self.assertEqual(kinds, ["job.submitted", "attempt.assigned", "attempt.started", "attempt.ended"])
        self.assertEqual(got.events[0].by, "admin")
        self.assertEqual(sorted(e.time for e in got.events), [e.time for e in got.events])
        ended = got.events[-1]
        self.assertIsInstance(ended.attempt, gpulayer.EventAttempt)
        assert ended.attempt is not None
        self.assertEqual((ended.task_index, ended.attempt.number, ended.attempt.outcome, ended.attempt.exit_code), (0, 1, "failed", 3))
        self.assertEqual(ended.attempt.worker_id, "dev-worker")
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.jobs.events("no-such-job")
        self.assertEqual((e.exception.code, e.exception.status), ("not_found", 404))

    def test_gpus_reach_the_task(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "echo $CUDA_VISIBLE_DEVICES"], gpus=2))
        self.assertEqual(job.resources and job.resources.gpus, 2)
        done = self.gl.jobs.wait(job.id, timeout=60)
        self.assertEqual(done.state, "succeeded")
        out = "".join(e.data for e in self.gl.jobs.logs(job.id)).strip()
        self.assertEqual(len(out.split(",")), 2, out)
        self.assertEqual(sorted(out.split(",")), sorted(done.tasks[0].devices))

    def test_get_echoes_the_spec(self) -> None:
        spec = JobSpec.command(["true"], env={"A": "1"}, count=2, priority=5, max_attempts=2, timeout_seconds=60)
        job = self.gl.jobs.submit(spec)
        got = self.gl.jobs.get(job.id)
        self.assertEqual(got.id, job.id)
        self.assertEqual(got.config, {"command": "true", "env": {"A": "1"}})
        self.assertEqual((got.count, got.priority, got.max_attempts, got.timeout_seconds), (2, 5, 2, 60))
        self.assertEqual(sorted(t.index for t in got.tasks), [0, 1])
        self.assertEqual(self.gl.jobs.wait(job.id, timeout=60).exit_codes, [0, 0])

    def test_list_pages_newest_first(self) -> None:
        ids = [self.gl.jobs.submit(JobSpec.command(["true"], name=f"list-{i}")).id for i in range(3)]
        newest = self.gl.jobs.list(limit=3)
        self.assertEqual([j.id for j in newest], ids[::-1])
        first = self.gl.jobs.page(limit=2)
        self.assertEqual([j.id for j in first.jobs], ids[:0:-1])
        self.assertTrue(first.next)
        second = self.gl.jobs.page(limit=1, after=first.next)
        self.assertEqual([j.id for j in second.jobs], [ids[0]])
        every = [j.id for j in self.gl.jobs.iter(page_size=2)]
        self.assertEqual(every[:3], ids[::-1])
        self.assertEqual(len(every), len(set(every)))
        self.assertEqual(every, [j.id for j in self.gl.jobs.list()])
        for i in ids:
            self.gl.jobs.wait(i, timeout=60)

    def test_cancel_a_running_job(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("started", "never")))
        poll("the job to run", lambda: self.gl.jobs.get(job.id).state == "running", 60)
        cancelled = self.gl.jobs.cancel(job.id)
        self.assertEqual(cancelled.id, job.id)
        self.assertTrue(all(t.cancel_requested or t.state == "cancelled" for t in cancelled.tasks))
        done = self.gl.jobs.wait(job.id, timeout=60)
        self.assertEqual(done.state, "cancelled")
        with self.assertRaises(gpulayer.Error) as again:
            self.gl.jobs.cancel(job.id)
        self.assertEqual((again.exception.code, again.exception.status), ("conflict", 409))

    def test_logs_whole(self) -> None:
        job = self.gl.jobs.submit(JobSpec.command(["sh", "-c", "echo one; echo two >&2; echo three"]))
        self.gl.jobs.wait(job.id, timeout=60)
        entries = list(self.gl.jobs.logs(job.id))
        # The agent may send several lines in one entry: read per stream.
        by_stream = {s: "".join(e.data for e in entries if e.stream == s) for s in ("stdout", "stderr")}
        self.assertEqual(by_stream, {"stdout": "one\nthree\n", "stderr": "two\n"})
        self.assertEqual([e.seq for e in entries], sorted(e.seq for e in entries))
        self.assertTrue(all(e.task_id == job.tasks[0].id and e.attempt == 1 for e in entries))

    def test_logs_follow_streams_while_the_job_runs(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("first", "second")))
        seen = []
        for entry in self.gl.jobs.logs(job.id, follow=True):
            seen.append(entry.data)
            if entry.data == "first\n":
                # The job is blocked on the gate: this entry came live.
                self.assertEqual(self.gl.jobs.get(job.id).state, "running")
                gate.open()
        self.assertEqual(seen, ["first\n", "second\n"])
        self.assertTrue(self.gl.jobs.get(job.id).done)

    def test_leaving_a_follow_early_closes_it(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("first", "second")))
        stream = self.gl.jobs.logs(job.id, follow=True)
        self.assertEqual(next(stream).data, "first\n")
        stream.close()  # what leaving a for loop does
        gate.open()
        self.assertEqual(self.gl.jobs.wait(job.id, timeout=60).state, "succeeded")

    def test_explicit_idempotency_key(self) -> None:
        spec = JobSpec.command(["true"], idempotency_key="py-explicit-key")
        first = self.gl.jobs.submit(spec)
        again = self.gl.jobs.submit(spec)
        self.assertEqual(again.id, first.id)
        other = JobSpec.command(["false"], idempotency_key="py-explicit-key")
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.jobs.submit(other)
        self.assertEqual((e.exception.code, e.exception.status), ("conflict", 409))
        self.gl.jobs.wait(first.id, timeout=60)


if __name__ == "__main__":
    unittest.main()
