"""Tokens, workers, teams and usage against the real dev coordinator;
the requests as the contract shapes them (teams, usage, exec), checked on
a recording stub, and the real coordinator's refusals reaching the caller
as gpulayer.Error."""

from __future__ import annotations

import datetime as dt
import json
import unittest
import urllib.parse

import gpulayer

from . import fakes, support
from .support import poll


class TokensTest(support.DevTestCase):
    def test_create_list_get_revoke(self) -> None:
        created = self.gl.tokens.create("py-submitter", roles=["submit"], expires_in_seconds=3600)
        self.assertTrue(created.token.startswith("glc_"))
        self.assertNotIn(created.token, repr(created))
        self.assertEqual((created.kind, created.name, created.roles), ("client", "py-submitter", ["submit"]))
        self.assertTrue(created.expires_at)
        listed = {t.id: t for t in self.gl.tokens.list()}
        self.assertIn(created.id, listed)
        self.assertFalse(hasattr(listed[created.id], "token"))
        self.assertEqual(self.gl.tokens.get(created.id).name, "py-submitter")

        mine = gpulayer.Client(self.dev.addr, created.token)
        job = mine.jobs.submit(gpulayer.JobSpec.command(["true"]))
        self.assertEqual(job.created_by, "py-submitter")
        mine.jobs.wait(job.id, timeout=60)

        revoked = self.gl.tokens.revoke(created.id)
        self.assertTrue(revoked.revoked)
        with self.assertRaises(gpulayer.Error) as e:
            mine.jobs.list(limit=1)
        self.assertEqual((e.exception.code, e.exception.status), ("unauthenticated", 401))

    def test_join_token(self) -> None:
        created = self.gl.tokens.create("py-join", kind="join", max_uses=1, labels={"rack": "a"})
        self.addCleanup(self.gl.tokens.revoke, created.id)
        self.assertTrue(created.token.startswith("glj_"))
        self.assertEqual((created.kind, created.max_uses), ("join", 1))


    def test_instance_token(self) -> None:
        created = self.gl.tokens.create_instance("i-0abc", name="py-instance", expires_in_seconds=600)
        self.addCleanup(self.gl.tokens.revoke, created.id)
        self.assertTrue(created.token.startswith("gli_"))
        self.assertNotIn(created.token, repr(created))
        self.assertEqual((created.kind, created.max_uses), ("instance", 1))
        self.assertIn(created.id, [t.id for t in self.gl.tokens.list_instance()])
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.tokens.create_instance("has space")
        self.assertEqual(e.exception.code, "invalid_argument")


class WorkersTest(support.DevTestCase):
    def test_reissue(self) -> None:
        join = self.gl.tokens.create("py-reissue-join", kind="join", max_uses=1)
        self.addCleanup(self.gl.tokens.revoke, join.id)
        reg = gpulayer.Client(self.dev.addr, join.token)._transport.request(
            "POST", "/v1/workers/register", {"worker_id": "py-reissued", "executors": ["exec"]}).json()
        self.addCleanup(self.gl.workers.forget, "py-reissued")
        self.addCleanup(self.gl.workers.revoke, "py-reissued")
        got = self.gl.workers.reissue("py-reissued")
        self.assertEqual(got.worker_id, "py-reissued")
        self.assertTrue(got.worker_token.startswith("glw_"))
        self.assertNotEqual(got.worker_token, reg["worker_token"])
        self.assertNotIn(got.worker_token, repr(got))
        old = gpulayer.Client(self.dev.addr, reg["worker_token"])
        with self.assertRaises(gpulayer.Error) as e:
            old._transport.request("GET", "/v1/workers/self")
        self.assertEqual(e.exception.code, "unauthenticated")
        new = gpulayer.Client(self.dev.addr, got.worker_token)._transport.request("GET", "/v1/workers/self").json()
        self.assertEqual(new["worker_id"], "py-reissued")

    def test_list_and_get(self) -> None:
        workers = self.gl.workers.list()
        self.assertEqual([w.worker_id for w in workers], ["dev-worker"])
        w = self.gl.workers.get("dev-worker")
        self.assertEqual(len(w.devices), 8)
        self.assertTrue(all(d.uuid.startswith("GPU-") and d.memory_mib > 0 for d in w.devices))
        self.assertIn("exec", w.executors)
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.workers.get("no-such-worker")
        self.assertEqual(e.exception.code, "not_found")

    def test_drain_and_resume(self) -> None:
        self.addCleanup(self.gl.workers.resume, "dev-worker")
        self.assertEqual(self.gl.workers.drain("dev-worker", deadline_seconds=60).status, "draining")
        self.assertEqual(self.gl.workers.resume("dev-worker").status, "ready")
        poll("the worker to be ready", lambda: self.gl.workers.get("dev-worker").status == "ready")


    def test_cordon_and_uncordon_a_gpu(self) -> None:
        gpu = self.gl.workers.get("dev-worker").devices[0].uuid
        self.addCleanup(self.gl.workers.uncordon, "dev-worker", gpu)
        w = self.gl.workers.cordon("dev-worker", gpu, reason="fan noise")
        d = next(d for d in w.devices if d.uuid == gpu)
        self.assertEqual((d.cordoned, d.cordon_reason, d.healthy), (True, "fan noise", False))
        w = self.gl.workers.uncordon("dev-worker", gpu)
        self.assertFalse(next(d for d in w.devices if d.uuid == gpu).cordoned)
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.workers.cordon("dev-worker", "GPU-no-such-gpu")
        self.assertEqual(e.exception.code, "not_found")

    def test_drain_a_gpu(self) -> None:
        gpu = self.gl.workers.get("dev-worker").devices[-1].uuid
        self.addCleanup(self.gl.workers.uncordon, "dev-worker", gpu)
        w = self.gl.workers.drain_gpu("dev-worker", gpu, reason="reset")
        d = next(d for d in w.devices if d.uuid == gpu)
        self.assertEqual((d.cordoned, d.cordon_reason, d.healthy), (True, "reset", False))
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.workers.drain_gpu("dev-worker", "GPU-no-such-gpu")
        self.assertEqual(e.exception.code, "not_found")

    def test_mig_layout_on_fake_gpus(self) -> None:
        # dev's fake H100s have no NVML behind them: the request is taken,
        # holds the GPU, and its agent reports it failed, with why.
        gpu = self.gl.workers.get("dev-worker").devices[0].uuid
        self.addCleanup(self.gl.workers.clear_mig_layout, "dev-worker", gpu)
        w = self.gl.workers.set_mig_layout("dev-worker", gpu, ["3g.40gb", "3g.40gb"])
        self.assertEqual([(m.uuid, m.layout, m.state) for m in w.mig_layouts], [(gpu, ["3g.40gb", "3g.40gb"], "pending")])
        self.assertFalse(next(d for d in w.devices if d.uuid == gpu).healthy)

        def failed() -> bool:
            ms = self.gl.workers.get("dev-worker").mig_layouts
            return bool(ms) and ms[0].state == "failed"
        poll("the agent to report the layout failed", failed)
        self.assertIn("cannot be repartitioned", self.gl.workers.get("dev-worker").mig_layouts[0].reason)
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.workers.set_mig_layout("dev-worker", gpu, ["4g.40gb", "4g.40gb"])
        self.assertEqual(e.exception.code, "invalid_argument")
        w = self.gl.workers.clear_mig_layout("dev-worker", gpu)
        self.assertEqual(w.mig_layouts, [])
        self.assertTrue(next(d for d in w.devices if d.uuid == gpu).healthy)

    def test_forget_refuses_a_live_worker(self) -> None:
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.workers.forget("dev-worker")
        self.assertEqual((e.exception.code, e.exception.status), ("conflict", 409))
        self.assertEqual(self.gl.workers.get("dev-worker").status, "ready")


class TeamsTest(support.DevTestCase):
    def test_team_scope_usage_and_delete(self) -> None:
        team = self.gl.teams.create("py-vision", weight=2, quota_gpus=4, borrow_limit_gpus=1.5)
        self.assertEqual((team.name, team.weight, team.quota, team.borrow_limit),
                         ("py-vision", 2, gpulayer.TeamQuota(4), gpulayer.GPUs(1.5)))
        tok = self.gl.tokens.create("py-vision-user", roles=["submit"], team="py-vision")
        self.assertEqual(tok.team, "py-vision")
        mine = gpulayer.Client(self.dev.addr, tok.token)
        job = mine.jobs.submit(gpulayer.JobSpec.command(["true"], gpus=1))
        self.assertEqual(job.team, "py-vision")
        self.assertEqual(mine.jobs.wait(job.id, timeout=60).state, "succeeded")
        self.assertEqual([t.name for t in mine.teams.list()], ["py-vision"])

        # Another team's job is not found; the admin's lists every team.
        other = self.gl.jobs.submit(gpulayer.JobSpec.command(["true"]))
        self.addCleanup(self.gl.jobs.wait, other.id, timeout=60)
        with self.assertRaises(gpulayer.Error) as e:
            mine.jobs.get(other.id)
        self.assertEqual((e.exception.code, e.exception.status), ("not_found", 404))
        self.assertIn("default", [t.name for t in self.gl.teams.list()])

        # The job's GPU time, metered from its replicated start and end.
        by_job = mine.usage(group_by="job")
        self.assertEqual([(r.team, r.job_id, r.tasks) for r in by_job.rows], [("py-vision", job.id, 1)])
        self.assertGreater(by_job.rows[0].gpu_seconds, 0)
        by_team = self.gl.usage(group_by="team")
        self.assertIn("py-vision", [r.team for r in by_team.rows])

        self.assertEqual(self.gl.teams.update("py-vision", quota_gpus=8).quota, gpulayer.TeamQuota(8))
        capped = self.gl.teams.update("py-vision", quota_artifact_bytes=4096)
        self.assertEqual((capped.quota, capped.usage.artifact_bytes), (gpulayer.TeamQuota(8, 4096), 0))
        self.assertEqual(self.gl.teams.update("py-vision", clear_artifact_quota=True).quota, gpulayer.TeamQuota(8))
        self.gl.teams.delete("py-vision")
        with self.assertRaises(gpulayer.Error) as e:
            mine.jobs.list(limit=1)  # the team's tokens went with it
        self.assertEqual(e.exception.code, "unauthenticated")


class RefusalsTest(support.DevTestCase):
    """The contract's codes for bad team, usage, token and exec calls."""

    def test_the_real_refusal_reaches_the_caller(self) -> None:
        cases = {
            # call: the codes a coordinator may answer
            "teams.get": (lambda: self.gl.teams.get("py-no-such-team"), {"not_found"}),
            "teams.delete": (lambda: self.gl.teams.delete("py-no-such-team"), {"not_found"}),
            "teams.update": (lambda: self.gl.teams.update("py-no-such-team", weight=2), {"not_found"}),
            "teams.create bad name": (lambda: self.gl.teams.create("Bad Name!"), {"not_found", "invalid_argument"}),
            "usage bad group_by": (lambda: self.gl.usage(group_by="colour"), {"not_found", "invalid_argument"}),
            "tasks.exec unknown task": (lambda: self.gl.tasks.exec("jnosuch-0", ["true"]), {"not_found"}),
            "tokens.create unknown team": (
                lambda: self.gl.tokens.create("py-teamed", team="py-no-such-team"),
                {"not_found", "invalid_argument"},
            ),
        }
        for name, (call, codes) in cases.items():
            with self.subTest(name):
                with self.assertRaises(gpulayer.Error) as e:
                    call()
                self.assertIn(e.exception.code, codes, e.exception)
                self.assertIn(e.exception.status, {404, 400})
        # Nothing was created on the way.
        self.assertNotIn("py-teamed", [t.name for t in self.gl.tokens.list()])


class ContractShapesTest(unittest.TestCase):
    """The requests for teams, usage and exec as PROTOCOL.md shapes them,
    sent to a stub that records them and answers contract-shaped bodies."""

    def setUp(self) -> None:
        self.answers: "dict[str, fakes.Answer]" = {}
        self.stub = fakes.Stub(lambda seen: self.answers[f"{seen.method} {urllib.parse.urlsplit(seen.path).path}"])
        self.addCleanup(self.stub.close)
        self.gl = gpulayer.Client(self.stub.url, "glc_stub_token", retry_wait=0.5)

    def body(self, i: int = -1) -> object:
        return json.loads(self.stub.seen[i].body)

    def test_teams(self) -> None:
        team = {"name": "ml", "weight": 2, "quota": {"gpus": 8}, "borrow_limit": {"gpus": 4},
                "usage": {"gpus_in_use": 2.5, "running_tasks": 3, "pending_tasks": 1}, "created_at": "2026-12-06T00:00:00.000Z"}
        self.answers = {
            "POST /v1/teams": fakes.json_answer(201, {"team": team}),
            "GET /v1/teams": fakes.json_answer(200, {"teams": [team]}),
            "GET /v1/teams/ml": fakes.json_answer(200, {"team": team}),
            "PATCH /v1/teams/ml": fakes.json_answer(200, {"team": dict(team, weight=3)}),
            "DELETE /v1/teams/ml": fakes.json_answer(200, {"team": team}),
        }
        made = self.gl.teams.create("ml", weight=2, quota_gpus=8, borrow_limit_gpus=4)
        self.assertEqual(self.body(), {"name": "ml", "weight": 2, "quota": {"gpus": 8}, "borrow_limit": {"gpus": 4}})
        self.assertEqual((made.name, made.quota, made.usage), ("ml", gpulayer.TeamQuota(8), gpulayer.TeamUsage(2.5, 3, 1)))
        self.assertEqual(made.extra, {"created_at": "2026-12-06T00:00:00.000Z"})
        self.assertEqual([t.name for t in self.gl.teams.list()], ["ml"])
        self.assertEqual(self.gl.teams.get("ml").borrow_limit, gpulayer.GPUs(4))
        self.assertEqual(self.gl.teams.update("ml", weight=3).weight, 3)
        self.assertEqual(self.body(), {"weight": 3})
        self.gl.teams.update("ml", quota_artifact_bytes=4096)
        self.assertEqual(self.body(), {"quota": {"artifact_bytes": 4096}})
        self.gl.teams.update("ml", clear_artifact_quota=True)
        self.assertEqual(self.body(), {"clear_artifact_quota": True})
        self.gl.teams.delete("ml")
        self.assertEqual([s.method for s in self.stub.seen], ["POST", "GET", "GET", "PATCH", "PATCH", "PATCH", "DELETE"])

    def test_usage(self) -> None:
        self.answers = {"GET /v1/usage": fakes.json_answer(200, {
            "from": "2026-12-01T00:00:00.000Z", "to": "2026-12-02T00:00:00.000Z",
            "rows": [{"team": "ml", "gpu_model": "H100", "gpu_seconds": 7200.5, "preempted_gpu_seconds": 60, "tasks": 4}],
        })}
        start = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
        got = self.gl.usage(start=start, end="2026-12-02T00:00:00Z", group_by="gpu_model")
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.stub.seen[0].path).query)
        self.assertEqual(query, {"from": ["2026-12-01T00:00:00.000Z"], "to": ["2026-12-02T00:00:00Z"],
                                 "group_by": ["gpu_model"]})
        self.assertEqual((got.start, got.end), ("2026-12-01T00:00:00.000Z", "2026-12-02T00:00:00.000Z"))
        row = gpulayer.UsageRow(team="ml", gpu_model="H100", gpu_seconds=7200.5, preempted_gpu_seconds=60, tasks=4)
        self.assertEqual(got.rows, [row])
        with self.assertRaises(ValueError):
            self.gl.usage(start=dt.datetime(2026, 12, 1))  # naive: which zone?

    def test_queue(self) -> None:
        self.answers = {"GET /v1/queue": fakes.json_answer(200, {"teams": [
            {"team": "ml", "gpus_in_use": 8, "weight": 2, "share": 4, "quota": {"gpus": 8}, "borrow_limit": {"gpus": 0}, "queued": 3,
             "tasks": [{"position": 1, "task_id": "j1-0", "job_id": "j1", "priority": 5, "gpus": 2, "gang": True,
                        "reason": "team ml at its quota: 8 of 8 GPUs in use, borrow limit 0, the task needs 4"}]},
        ]})}
        got = self.gl.queue(team="ml", limit=10)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.stub.seen[0].path).query)
        self.assertEqual(query, {"team": ["ml"], "limit": ["10"]})
        team = got.teams[0]
        self.assertEqual((team.team, team.share, team.quota, team.borrow_limit, team.queued), ("ml", 4, gpulayer.GPUs(8), gpulayer.GPUs(0), 3))
        self.assertEqual(team.tasks, [gpulayer.QueueTask(position=1, task_id="j1-0", job_id="j1", priority=5, gpus=2, gang=True,
                                                        reason="team ml at its quota: 8 of 8 GPUs in use, borrow limit 0, the task needs 4")])
        self.gl.queue()
        self.assertEqual(urllib.parse.urlsplit(self.stub.seen[1].path).query, "")

    def test_token_team(self) -> None:
        created = {"id": "abc", "kind": "client", "name": "n", "team": "ml", "roles": ["submit"], "token": "glc_abc_secret"}
        self.answers = {"POST /v1/tokens": fakes.json_answer(201, created)}
        got = self.gl.tokens.create("n", roles=["submit"], team="ml")
        self.assertEqual(self.body(), {"kind": "client", "name": "n", "roles": ["submit"], "team": "ml"})
        self.assertEqual((got.team, got.token), ("ml", "glc_abc_secret"))
        self.assertNotIn("secret", repr(got))

    def test_exec_request(self) -> None:
        self.answers = {"POST /v1/tasks/j1-0/exec": fakes.error_answer(404, "not_found", "no task j1-0")}
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.tasks.exec("j1-0", ["nvidia-smi", "-L"])
        self.assertEqual(e.exception.code, "not_found")
        self.assertEqual(self.body(), {"command": ["nvidia-smi", "-L"]})
        # An accepted exec: stdin goes whole to the attach path, the frames
        # come back as lines, the exit code last.
        frames = [{"type": "stdout", "data": "aGk="}, {"type": "stderr", "data": "ZXJy"}, {"type": "exit", "code": 3}]
        session = {"id": "s1", "task_id": "j1-0", "attach_path": "/v1/exec/s1", "expires_at": "2026-12-07T00:00:30Z"}
        self.answers = {
            "POST /v1/tasks/j1-0/exec": fakes.json_answer(201, session),
            "POST /v1/exec/s1": (200, {"Content-Type": "application/x-ndjson"}, b"".join(json.dumps(f).encode() + b"\n" for f in frames)),
        }
        got = self.gl.tasks.exec("j1-0", ["cat"], stdin=b"piped")
        self.assertEqual(got, gpulayer.ExecResult(stdout=b"hi", stderr=b"err", exit_code=3))
        self.assertEqual((self.stub.seen[-1].body, self.stub.seen[-1].headers.get("content-type")), (b"piped", "application/octet-stream"))
        # An error frame is the session's refusal.
        self.answers["POST /v1/exec/s1"] = (200, {"Content-Type": "application/x-ndjson"},
                                            json.dumps({"type": "error", "error_code": "conflict", "message": "agent gone"}).encode() + b"\n")
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.tasks.exec("j1-0", ["true"])
        self.assertEqual(e.exception.code, "conflict")
        with self.assertRaises(ValueError):
            self.gl.tasks.exec("j1-0", "ls -l")  # a string, not a list

if __name__ == "__main__":
    unittest.main()
