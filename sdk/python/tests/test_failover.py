"""Following the leader and retrying like sdk/client: the next address
after a refused connection, a redirect to the leader, a node without a
leader, the retry budget, rate limits, and which writes are resent after
their answer was lost (a submit, made idempotent by its key) and which
are not (a cancel)."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import unittest
from typing import Callable

import gpulayer
from gpulayer import JobSpec

from . import fakes, support
from .test_jobs import Gate


class FailoverTest(support.DevTestCase):
    def stub(self, answer: Callable[[fakes.Seen], fakes.Answer]) -> fakes.Stub:
        s = fakes.Stub(answer)
        self.addCleanup(s.close)
        return s

    def proxy(self) -> fakes.Proxy:
        p = fakes.Proxy(self.dev.addr)
        self.addCleanup(p.close)
        return p

    def test_a_refused_address_is_skipped(self) -> None:
        dead = fakes.closed_address()
        gl = gpulayer.Client([dead, self.dev.addr], self.dev.token)
        job = gl.jobs.submit(JobSpec.command(["true"]))
        self.assertEqual(gl.jobs.wait(job.id, timeout=60).state, "succeeded")
        self.assertEqual(sum(1 for j in self.gl.jobs.list(limit=20) if j.idempotency_key == job.idempotency_key), 1)

    def test_comma_separated_addresses(self) -> None:
        gl = gpulayer.Client(f"{fakes.closed_address()}, {self.dev.addr.replace('http://', '')}", self.dev.token)
        self.assertEqual(gl.addresses[1], self.dev.addr)
        gl.jobs.list(limit=1)

    def test_no_address_answers_within_the_budget(self) -> None:
        a, b = fakes.closed_address(), fakes.closed_address()
        gl = gpulayer.Client([a, b], self.dev.token, retry_wait=0.5)
        start = time.monotonic()
        with self.assertRaises(gpulayer.Error) as e:
            gl.jobs.list()
        took = time.monotonic() - start
        self.assertEqual(e.exception.code, "unavailable")
        self.assertIsNone(e.exception.status)
        self.assertIn(a, e.exception.message)
        self.assertIn(b, e.exception.message)
        self.assertIn("connection refused", e.exception.message)
        # Backoff between tries is at most 250 ms: the budget is kept.
        self.assertGreaterEqual(took, 0.5)
        self.assertLess(took, 3.0)

    def test_not_leader_redirects_and_the_leader_is_kept(self) -> None:
        follower = self.stub(lambda seen: fakes.error_answer(421, "not_leader", "not the leader", leader=self.dev.addr))
        gl = gpulayer.Client([follower.url], self.dev.token)
        job = gl.jobs.submit(JobSpec.command(["true"]))
        gl.jobs.get(job.id)
        gl.jobs.wait(job.id, timeout=60)
        # One redirect, then every call went to the leader it named.
        self.assertEqual(len(follower.seen), 1)
        self.assertEqual(follower.seen[0].method, "POST")

    def test_no_leader_moves_to_the_next_address(self) -> None:
        leaderless = self.stub(lambda seen: fakes.error_answer(503, "no_leader", "no leader", headers={"Retry-After": "1"}))
        gl = gpulayer.Client([leaderless.url, self.dev.addr], self.dev.token)
        gl.jobs.list(limit=1)
        self.assertEqual(len(leaderless.seen), 1)
        only = gpulayer.Client([leaderless.url], self.dev.token, retry_wait=0.3)
        with self.assertRaises(gpulayer.Error) as e:
            only.jobs.list(limit=1)
        self.assertEqual(e.exception.code, "unavailable")
        self.assertIn("no_leader", e.exception.message)
        self.assertGreater(len(leaderless.seen), 2)

    def test_every_request_carries_the_protocol_header(self) -> None:
        stub = self.stub(lambda seen: fakes.json_answer(200, {"jobs": [], "next": ""}))
        gpulayer.Client(stub.url, "glc_x_y").jobs.list()
        self.assertEqual(stub.seen[0].headers.get("x-gpulayer-protocol"), "1")
        self.assertEqual(stub.seen[0].headers.get("authorization"), "Bearer glc_x_y")
        self.assertTrue(stub.seen[0].headers.get("user-agent", "").startswith("gpulayer-python/"))

    @unittest.skipIf(shutil.which("openssl") is None, "no openssl command to make a test certificate")
    def test_https_trusts_the_ca_file(self) -> None:
        d = tempfile.mkdtemp(prefix="gpulayer-py-tls-")
        self.addCleanup(shutil.rmtree, d, True)
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.load_cert_chain(cert, key)
        stub = fakes.Stub(lambda seen: fakes.json_answer(200, {"jobs": [], "next": ""}), tls=server)
        self.addCleanup(stub.close)
        self.assertTrue(stub.url.startswith("https://"))
        self.assertEqual(gpulayer.Client(stub.url, "t", ca_file=cert).jobs.page().jobs, [])
        # Unknown to the client: refused at once, not retried for the budget.
        start = time.monotonic()
        with self.assertRaises(gpulayer.Error) as e:
            gpulayer.Client(stub.url, "t", retry_wait=30).jobs.page()
        self.assertEqual(e.exception.code, "unavailable")
        self.assertIn("TLS", e.exception.message)
        self.assertLess(time.monotonic() - start, 5)
        with self.assertRaises(gpulayer.Error) as e:
            gpulayer.Client(stub.url, "t", ca_file=os.path.join(d, "missing.pem"))
        self.assertEqual(e.exception.code, "invalid_argument")

    def test_rate_limited_is_waited_out_within_the_budget(self) -> None:
        answers = iter([fakes.error_answer(429, "rate_limited", "slow down", headers={"Retry-After": "1"})])

        def answer(seen: fakes.Seen) -> fakes.Answer:
            return next(answers, fakes.json_answer(200, {"jobs": [], "next": ""}))

        stub = self.stub(answer)
        start = time.monotonic()
        self.assertEqual(gpulayer.Client(stub.url, "t").jobs.page().jobs, [])
        self.assertGreaterEqual(time.monotonic() - start, 1.0)
        self.assertEqual(len(stub.seen), 2)

        slow = self.stub(lambda seen: fakes.error_answer(429, "rate_limited", "slow down", headers={"Retry-After": "30"}))
        start = time.monotonic()
        with self.assertRaises(gpulayer.Error) as e:
            gpulayer.Client(slow.url, "t", retry_wait=2).jobs.page()
        self.assertLess(time.monotonic() - start, 1.0)  # no wait past the budget
        self.assertEqual((e.exception.code, e.exception.status, e.exception.retry_after), ("rate_limited", 429, 30))

    def test_a_submit_whose_answer_is_lost_lands_once(self) -> None:
        proxy = self.proxy()
        proxy.drop("POST", "/v1/jobs", 1)
        gl = gpulayer.Client(proxy.url, self.dev.token)
        job = gl.jobs.submit(JobSpec.command(["true"], name="lost-answer"))
        posts = proxy.requests("POST", "/v1/jobs")
        self.assertEqual(len(posts), 2)  # sent, answer lost, sent again
        self.assertEqual(posts[0].body, posts[1].body)
        key = json.loads(posts[0].body)["idempotency_key"]
        self.assertEqual(job.idempotency_key, key)
        same = [j for j in self.gl.jobs.list(limit=50) if j.idempotency_key == key]
        self.assertEqual([j.id for j in same], [job.id])
        self.gl.jobs.wait(job.id, timeout=60)

    def test_a_cancel_whose_answer_is_lost_is_not_resent(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("started", "never")))
        proxy = self.proxy()
        proxy.drop("POST", f"/v1/jobs/{job.id}/cancel", 1)
        with self.assertRaises(gpulayer.Error) as e:
            gpulayer.Client(proxy.url, self.dev.token).jobs.cancel(job.id)
        self.assertEqual(e.exception.code, "outcome_unknown")
        self.assertTrue(e.exception.outcome_unknown)
        self.assertIsNone(e.exception.status)
        self.assertEqual(len(proxy.requests("POST", f"/v1/jobs/{job.id}/cancel")), 1)
        # It had been applied: the caller reads the state to know.
        self.assertEqual(self.gl.jobs.wait(job.id, timeout=60).state, "cancelled")

    def test_a_write_the_coordinator_may_have_applied_is_not_resent(self) -> None:
        maybe = fakes.error_answer(503, "no_leader", "lost leadership while committing",
                                   headers={"X-GpuLayer-Outcome": "unknown"})
        stub = self.stub(lambda seen: maybe)
        gl = gpulayer.Client([stub.url, self.dev.addr], self.dev.token)
        with self.assertRaises(gpulayer.Error) as e:
            gl.jobs.cancel("jwhatever")
        self.assertEqual((e.exception.code, e.exception.status), ("no_leader", 503))
        self.assertTrue(e.exception.outcome_unknown)
        self.assertEqual(len(stub.seen), 1)
        # A submit carries its key, so it is resent: on the next address.
        job = gl.jobs.submit(JobSpec.command(["true"]))
        self.assertEqual(len(stub.seen), 2)
        self.gl.jobs.wait(job.id, timeout=60)

    def test_a_cut_follow_stream_resumes_without_repeats(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("first", "second")))
        proxy = self.proxy()
        proxy.cut("GET", f"/v1/jobs/{job.id}/logs", b"first", 1)
        gl = gpulayer.Client(proxy.url, self.dev.token)
        seen = []
        for entry in gl.jobs.logs(job.id, follow=True):
            seen.append(entry.data)
            if entry.data == "first\n":
                gate.open()
        self.assertEqual(seen, ["first\n", "second\n"])
        self.assertGreaterEqual(len(proxy.requests("GET", f"/v1/jobs/{job.id}/logs")), 2)

    def test_a_follow_stream_whose_trailer_was_dropped_ends(self) -> None:
        gate = Gate(self)
        job = self.gl.jobs.submit(JobSpec.command(gate.script("first", "second")))
        proxy = self.proxy()
        proxy.strip_trailers = True
        gl = gpulayer.Client(proxy.url, self.dev.token)
        seen = []
        for entry in gl.jobs.logs(job.id, follow=True):
            seen.append(entry.data)
            if entry.data == "first\n":
                gate.open()
        self.assertEqual(seen, ["first\n", "second\n"])
        # The followed stream, then one read of what was left (nothing).
        self.assertEqual([s.path for s in proxy.requests("GET", f"/v1/jobs/{job.id}/logs")],
                         [f"/v1/jobs/{job.id}/logs?follow=1", f"/v1/jobs/{job.id}/logs"])


if __name__ == "__main__":
    unittest.main()
