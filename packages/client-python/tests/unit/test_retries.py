from __future__ import annotations

import unittest
from collections.abc import Iterator
from unittest import mock

from support import Reply, TestServer, json_reply

from pressroom import Pressroom, PressroomError
from pressroom._http import parse_retry_after

API_KEY = "pr_test_key_0123456789abcdef"
QUEUED = {"id": "job_01", "status": "queued"}


def error(status: int, code: str, retry_after: str = "") -> Reply:
    return json_reply(status, {"error": "no", "code": code, "hint": "Wait."}, {"Retry-After": retry_after} if retry_after else {})


class Retries(unittest.TestCase):
    """Opt-in retries against a real local HTTP server; the waits are recorded, not slept."""

    def setUp(self) -> None:
        self.server = TestServer()
        self.addCleanup(self.server.close)
        self.waits: list[float] = []
        patcher = mock.patch("pressroom._http._sleep", side_effect=self.waits.append)
        patcher.start()
        self.addCleanup(patcher.stop)

    def answer(self, *replies: Reply) -> None:
        """The server answers with these replies in turn, then 500s."""
        queue: Iterator[Reply] = iter(replies)
        self.server.handler = lambda request: next(queue, error(500, "INTERNAL_ERROR"))

    def client(self, **kwargs: object) -> Pressroom:
        return Pressroom(api_key=API_KEY, base_url=self.server.base_url, **kwargs)  # type: ignore[arg-type]

    def keys(self) -> list[str]:
        return [request.headers.get("idempotency-key", "") for request in self.server.requests]

    def test_none_by_default(self) -> None:
        self.answer(error(500, "INTERNAL_ERROR"), json_reply(202, QUEUED))
        with self.assertRaises(PressroomError) as caught:
            self.client().render(template_id="invoice", data={})
        self.assertEqual(caught.exception.code, "INTERNAL_ERROR")
        self.assertEqual(len(self.server.requests), 1)
        self.assertEqual(self.keys(), [""], "no Idempotency-Key without retries")
        self.assertEqual(self.waits, [])

    def test_a_429_waits_retry_after_and_the_retry_carries_the_same_idempotency_key(self) -> None:
        self.answer(error(429, "RATE_LIMITED", "3"), error(429, "CONCURRENCY_EXCEEDED", "1"), json_reply(202, QUEUED))
        result = self.client(max_retries=2).render(template_id="invoice", data={"n": 1})
        self.assertEqual(result.id, "job_01")
        self.assertEqual(self.waits, [3.0, 1.0])
        keys = self.keys()
        self.assertEqual(len(keys), 3)
        self.assertRegex(keys[0], r"^[\x21-\x7e]{1,255}$")
        self.assertEqual(set(keys), {keys[0]}, "one key for every attempt of one call")
        self.assertEqual({request.body for request in self.server.requests}, {b'{"template_id":"invoice","data":{"n":1}}'})

    def test_internal_errors_back_off_exponentially_with_jitter(self) -> None:
        self.answer(
            error(500, "INTERNAL_ERROR"),
            Reply(502, b"<html>Bad Gateway</html>"),
            error(500, "INTERNAL_ERROR"),
            json_reply(201, {"checkout_url": "u", "session_id": "cs_1", "plan": "pro"}),
        )
        session = self.client(max_retries=3).checkout(plan="pro")
        self.assertEqual(session.session_id, "cs_1")
        self.assertEqual(len(self.waits), 3)
        for wait, ceiling in zip(self.waits, (0.5, 1.0, 2.0)):
            self.assertGreaterEqual(wait, ceiling / 2)
            self.assertLessEqual(wait, ceiling)
        self.assertEqual(len(set(self.keys())), 1)
        self.assertNotEqual(self.keys()[0], "")

    def test_gives_up_after_max_retries_with_the_last_error(self) -> None:
        self.answer(*[error(429, "RATE_LIMITED", "2")] * 5)
        with self.assertRaises(PressroomError) as caught:
            self.client(max_retries=2).image(template_id="social-card", data={})
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("RATE_LIMITED", 2))
        self.assertEqual(len(self.server.requests), 3)
        self.assertEqual(self.waits, [2.0, 2.0])

    def test_a_retry_after_longer_than_max_retry_wait_is_raised_at_once(self) -> None:
        self.answer(error(429, "QUOTA_EXCEEDED", "86400"), json_reply(202, QUEUED))
        with self.assertRaises(PressroomError) as caught:
            self.client(max_retries=3).render(template_id="invoice", data={})
        self.assertEqual(caught.exception.code, "QUOTA_EXCEEDED")
        self.assertEqual((len(self.server.requests), self.waits), (1, []))
        self.answer(error(429, "RATE_LIMITED", "20"), json_reply(202, QUEUED))
        self.assertEqual(self.client(max_retries=1, max_retry_wait=20).render(template_id="invoice", data={}).id, "job_01")
        self.assertEqual(self.waits, [20.0])

    def test_client_errors_are_not_retried(self) -> None:
        for status, code in ((422, "PAYLOAD_INVALID"), (401, "AUTH_INVALID"), (404, "TEMPLATE_NOT_FOUND")):
            self.server.requests.clear()
            self.answer(error(status, code), json_reply(202, QUEUED))
            with self.assertRaises(PressroomError):
                self.client(max_retries=3).render(template_id="invoice", data={})
            self.assertEqual(len(self.server.requests), 1, code)
        self.assertEqual(self.waits, [])

    def test_gets_are_retried_without_an_idempotency_key(self) -> None:
        self.answer(error(503, "UNAVAILABLE", "1"), json_reply(200, {"plan": "free"}), error(500, "INTERNAL_ERROR"), Reply(200, b"%PDF"))
        client = self.client(max_retries=1)
        self.assertEqual(client.usage().plan, "free")
        self.assertEqual(client.download("/v1/outputs/out_1?exp=1&sig=ab"), b"%PDF")
        self.assertEqual(self.keys(), ["", "", "", ""])

    def test_screenshot_checkout_and_create_batch_send_a_key_of_their_own_too_and_a_read_none(self) -> None:
        self.answer(*[json_reply(202, QUEUED)] * 4)
        client = self.client(max_retries=1)
        client.screenshot(html="<p>x</p>")
        client.checkout("pro")
        client.create_batch([{"template_id": "invoice", "data": {}}])
        client.job("job_01")
        self.assertEqual(
            [(request.method, request.path) for request in self.server.requests],
            [("POST", "/v1/screenshot"), ("POST", "/v1/billing/checkout"), ("POST", "/v1/batches"), ("GET", "/v1/jobs/job_01")],
        )
        screenshot, checkout, batch, read = self.keys()
        for key in (screenshot, checkout, batch):
            self.assertRegex(key, r"^[\x21-\x7e]{1,255}$")
        self.assertEqual(len({screenshot, checkout, batch}), 3, "one key per call")
        self.assertEqual(read, "")

    def test_each_call_has_its_own_key_and_a_given_key_is_sent_as_is(self) -> None:
        self.answer(*[json_reply(202, QUEUED)] * 3)
        retrying = self.client(max_retries=1)
        retrying.render(template_id="invoice", data={})
        retrying.render(template_id="invoice", data={})
        self.client().render(template_id="invoice", data={}, idempotency_key="order-42/invoice")
        keys = self.keys()
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2], "order-42/invoice")
        for bad in ("", "x" * 256, "has space", "ünï"):
            with self.subTest(bad), self.assertRaises(ValueError):
                self.client().render(template_id="invoice", data={}, idempotency_key=bad)


class RetryAfter(unittest.TestCase):
    def test_reads_delta_seconds_and_http_dates(self) -> None:
        now = 1767225600.0  # 2026-01-01T00:00:00Z
        self.assertEqual(parse_retry_after("120", now), 120)
        self.assertEqual(parse_retry_after(" 5 ", now), 5)
        self.assertEqual(parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now), 30)
        self.assertEqual(parse_retry_after("Wed, 31 Dec 2025 23:00:00 GMT", now), 0)
        self.assertIsNone(parse_retry_after("soon", now))
        self.assertIsNone(parse_retry_after("-1", now))
        self.assertIsNone(parse_retry_after(None, now))


if __name__ == "__main__":
    unittest.main()
