"""The one exception type: a coordinator's refusal reaches the caller as
gpulayer.Error with the contract's code and status, bad input changes
nothing, and no error ever shows the token."""

from __future__ import annotations

import pickle
import unittest

import gpulayer
from gpulayer import JobSpec

from . import fakes, support


class ErrorsTest(support.DevTestCase):
    def assertNoToken(self, err: gpulayer.Error, token: str) -> None:
        secret = token.rsplit("_", 1)[-1]
        for text in (str(err), repr(err), err.message, repr(err.args), repr(pickle.loads(pickle.dumps(err)))):
            self.assertNotIn(secret, text)
            self.assertNotIn(token, text)

    def test_bad_input_is_invalid_argument_and_creates_nothing(self) -> None:
        cases = [
            ("unknown field", JobSpec.command(["true"], extra={"bogus": 1}), "bogus"),
            ("no executor", JobSpec(executor="", config={"command": "true"}), "executor"),
            ("negative count", JobSpec.command(["true"], count=-1), "count"),
            ("dir outside the task", JobSpec.command(["true"], dir="../.."), "config.dir"),
        ]
        for name, spec, field in cases:
            with self.subTest(name):
                before = [j.id for j in self.gl.jobs.list(limit=5)]
                with self.assertRaises(gpulayer.Error) as e:
                    self.gl.jobs.submit(spec)
                err = e.exception
                self.assertEqual((err.code, err.status), ("invalid_argument", 400), err)
                self.assertIn(field, err.message)
                self.assertTrue(err.request_id)
                self.assertFalse(err.retryable)
                self.assertEqual([j.id for j in self.gl.jobs.list(limit=5)], before)
                self.assertNoToken(err, self.dev.token)

    def test_unknown_job_is_not_found(self) -> None:
        calls = {
            "get": lambda: self.gl.jobs.get("jdoesnotexist"),
            "cancel": lambda: self.gl.jobs.cancel("jdoesnotexist"),
            "logs": lambda: list(self.gl.jobs.logs("jdoesnotexist")),
            "follow": lambda: list(self.gl.jobs.logs("jdoesnotexist", follow=True)),
            "wait": lambda: self.gl.jobs.wait("jdoesnotexist", timeout=5),
            "odd id": lambda: self.gl.jobs.get("../tokens"),
        }
        for name, call in calls.items():
            with self.subTest(name):
                with self.assertRaises(gpulayer.Error) as e:
                    call()
                self.assertEqual((e.exception.code, e.exception.status), ("not_found", 404), e.exception)
                self.assertNoToken(e.exception, self.dev.token)

    def test_a_bad_token_is_unauthenticated_and_not_shown(self) -> None:
        token = "glc_0123456789abcdef_" + "ab" * 32
        gl = gpulayer.Client(self.dev.addr, token)
        with self.assertRaises(gpulayer.Error) as e:
            gl.jobs.list()
        self.assertEqual((e.exception.code, e.exception.status), ("unauthenticated", 401))
        self.assertNoToken(e.exception, token)
        self.assertNotIn(token, repr(gl))
        self.assertNotIn(self.dev.token, repr(self.gl))
        self.assertNotIn(self.dev.token, repr(self.gl.jobs))

    def test_a_read_token_may_not_submit(self) -> None:
        created = self.gl.tokens.create("py-reader", roles=["read"])
        self.addCleanup(self.gl.tokens.revoke, created.id)
        reader = gpulayer.Client(self.dev.addr, created.token)
        reader.jobs.list(limit=1)
        with self.assertRaises(gpulayer.Error) as e:
            reader.jobs.submit(JobSpec.command(["true"]))
        self.assertEqual((e.exception.code, e.exception.status), ("forbidden", 403))
        self.assertNoToken(e.exception, created.token)

    def test_errors_the_client_makes_hold_no_token(self) -> None:
        unreachable = gpulayer.Client([fakes.closed_address()], self.dev.token, retry_wait=0.2)
        with self.assertRaises(gpulayer.Error) as e:
            unreachable.jobs.get("j1")
        self.assertEqual(e.exception.code, "unavailable")
        self.assertIsNone(e.exception.status)
        self.assertTrue(e.exception.retryable)
        self.assertNoToken(e.exception, self.dev.token)

        # A coordinator that quotes the request back (a proxy's error
        # page, say) still does not put the token in the error.
        echo = fakes.Stub(lambda seen: (502, {"Content-Type": "text/plain"}, repr(seen.headers).encode()))
        self.addCleanup(echo.close)
        with self.assertRaises(gpulayer.Error) as e:
            gpulayer.Client(echo.url, self.dev.token).jobs.get("j1")
        self.assertEqual((e.exception.code, e.exception.status), ("internal", 502))
        self.assertIn("authorization", e.exception.message)
        self.assertNoToken(e.exception, self.dev.token)

    def test_errors_pickle_whole(self) -> None:
        with self.assertRaises(gpulayer.Error) as e:
            self.gl.jobs.get("jdoesnotexist")
        back = pickle.loads(pickle.dumps(e.exception))
        self.assertEqual((back.code, back.status, back.message, back.request_id),
                         (e.exception.code, e.exception.status, e.exception.message, e.exception.request_id))


if __name__ == "__main__":
    unittest.main()
