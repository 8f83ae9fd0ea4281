"""The records: wire names in and out, unknown fields kept, no secret in
a repr."""

from __future__ import annotations

import unittest

import gpulayer
from gpulayer import JobSpec, Resources


class ModelsTest(unittest.TestCase):
    def test_command_spec_encodes_only_what_is_set(self) -> None:
        cases = [
            ("argv only", JobSpec.command(["true"]), {"executor": "exec", "config": {"command": "true"}}),
            (
                "args, env, dir, gpus",
                JobSpec.command(["python", "train.py", "--lr", "3e-4"], env={"SEED": "1"}, dir="work", gpus=2, name="t"),
                {"executor": "exec", "name": "t", "resources": {"gpus": 2},
                 "config": {"command": "python", "args": ["train.py", "--lr", "3e-4"], "env": {"SEED": "1"}, "dir": "work"}},
            ),
            (
                "gpus join given resources",
                JobSpec.command(["x"], gpus=1, resources=Resources(gpu_model="H100")),
                {"executor": "exec", "config": {"command": "x"}, "resources": {"gpus": 1, "gpu_model": "H100"}},
            ),
            (
                "third-wave fields and extra",
                JobSpec.command(["x"], priority=10, preemptible=False, depends_on=[gpulayer.Dependency("j1")],
                                extra={"future": [1]}),
                {"executor": "exec", "config": {"command": "x"}, "priority": 10, "preemptible": False,
                 "depends_on": [{"job": "j1", "condition": "succeeded"}], "future": [1]},
            ),
        ]
        for name, spec, want in cases:
            with self.subTest(name):
                self.assertEqual(spec.to_dict(), want)

    def test_job_shows_parallelism_and_dependencies(self) -> None:
        job = gpulayer.Job.from_dict({
            "id": "j2", "state": "pending", "executor": "exec", "count": 4, "parallelism": 2,
            "depends_on": [{"job": "j1", "condition": "finished"}],
            "tasks": [{"id": "j2-0", "index": 0, "state": "pending", "pending_reason": "waits for job j1 to end (finished)"}],
        })
        self.assertEqual(job.parallelism, 2)
        self.assertEqual(job.depends_on, [gpulayer.Dependency("j1", "finished")])
        self.assertEqual(job.extra, {})
        self.assertIn("j1", job.tasks[0].pending_reason or "")

    def test_command_needs_a_list(self) -> None:
        for bad in ("echo hi", []):
            with self.subTest(repr(bad)):
                with self.assertRaises(ValueError):
                    JobSpec.command(bad)  # type: ignore[arg-type]

    def test_job_events_decode_a_preemption(self) -> None:
        got = gpulayer.JobEvents.from_dict({"job_id": "j1", "events": [
            {"time": "t1", "kind": "attempt.preempted", "task_id": "j1-0", "task_index": 0,
             "attempt": {"attempt_id": "a", "number": 1, "worker_id": "w1", "devices": ["GPU-0"]},
             "preempted_by": {"job_id": "j2", "team": "research", "task_id": "j2-0"}},
            {"time": "t2", "kind": "checkpoint.saved", "task_id": "j1-0", "task_index": 0,
             "checkpoint": {"sha256": "ab", "size": 8, "attempt_id": "a", "format": "file"}, "future": 1},
        ]})
        first, second = got.events
        self.assertEqual(first.preempted_by, gpulayer.Preemptor(job_id="j2", team="research", task_id="j2-0"))
        self.assertEqual(first.attempt and first.attempt.devices, ["GPU-0"])
        self.assertEqual(second.checkpoint, gpulayer.Checkpoint(sha256="ab", size=8, attempt_id="a", format="file"))
        self.assertEqual(second.extra, {"future": 1})
        self.assertFalse(got.truncated)

    def test_decoding_keeps_unknown_fields(self) -> None:
        job = gpulayer.Job.from_dict({
            "id": "j1", "state": "failed", "executor": "exec", "team": "ml", "gang": True,
            "resources": {"gpus": 1, "future_knob": 2},
            "tasks": [
                {"id": "j1-1", "index": 1, "state": "failed", "exit_code": 2,
                 "attempts": [{"attempt_id": "a", "number": 1, "state": "failed", "exit_code": 2}]},
                {"id": "j1-0", "index": 0, "state": "succeeded", "exit_code": 0, "checkpoint": {"sha256": "00"}},
            ],
        })
        self.assertEqual(job.team, "ml")
        self.assertEqual(job.extra, {"gang": True})
        self.assertEqual(job.resources, Resources(gpus=1, extra={"future_knob": 2}))
        self.assertEqual(job.exit_codes, [0, 2])  # in task order
        self.assertTrue(job.done)
        self.assertFalse(job.succeeded)
        self.assertEqual(job.tasks[0].attempts[0].exit_code, 2)
        self.assertEqual(job.tasks[1].extra, {"checkpoint": {"sha256": "00"}})

    def test_created_token_repr_hides_the_secret(self) -> None:
        t = gpulayer.CreatedToken.from_dict({"id": "i", "kind": "client", "name": "n", "token": "glc_i_s3cr3t"})
        self.assertEqual(t.token, "glc_i_s3cr3t")
        self.assertNotIn("s3cr3t", repr(t))
        self.assertNotIn("s3cr3t", str(t))

    def test_error_fields(self) -> None:
        e = gpulayer.Error("not_found", "no job j1", status=404, request_id="r1")
        self.assertEqual(str(e), "HTTP 404 not_found: no job j1 (request r1)")
        self.assertEqual(repr(e), "Error(code='not_found', status=404, message='no job j1', request_id='r1')")
        self.assertFalse(e.retryable)
        self.assertTrue(gpulayer.Error("no_leader", "x", status=503).retryable)


if __name__ == "__main__":
    unittest.main()
