from __future__ import annotations

import os
import pickle
import traceback
import unittest
from typing import Any
from unittest import mock

from support import Recorded, Reply, TestServer, always, closed_port, json_reply

from pressroom import ApiObject, Destination, Job, Pressroom, PressroomError, RenderResult, SignupResult

API_KEY = "pr_test_key_0123456789abcdef"
SUCCEEDED = {
    "id": "job_01",
    "status": "succeeded",
    "url": "http://127.0.0.1/v1/outputs/out_1?exp=1&sig=ab",
    "expires_at": "2026-01-02T00:00:00.000Z",
    "content_type": "application/pdf",
    "size_bytes": 1234,
}
SIGNED = "?exp=1767225600&sig=5ecret5ignature0123456789abcdef"


def traceback_of(err: PressroomError) -> str:
    """What a log line of the exception shows: its traceback, causes and contexts included, and its repr."""
    return "".join(traceback.format_exception(type(err), err, err.__traceback__)) + repr(err) + err.hint


def error_body(code: str, message: str = "it failed", hint: str = "Do something else.") -> dict[str, str]:
    return {"error": message, "code": code, "hint": hint}


class ServerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = TestServer()
        self.addCleanup(self.server.close)
        self.client = Pressroom(api_key=API_KEY, base_url=self.server.base_url)

    def raised(self, call: Any, *args: Any, **kwargs: Any) -> PressroomError:
        with self.assertRaises(PressroomError) as caught:
            call(*args, **kwargs)
        return caught.exception


class Construction(unittest.TestCase):
    def test_requires_an_api_key(self) -> None:
        for key in ("", "   ", None):
            with self.subTest(key=key), self.assertRaisesRegex(ValueError, "api_key is required"):
                Pressroom(api_key=key)  # type: ignore[arg-type]

    def test_base_url_defaults_to_pressroom_base_url_then_localhost(self) -> None:
        with mock.patch.dict(os.environ, {"PRESSROOM_BASE_URL": ""}):
            self.assertEqual(Pressroom(api_key=API_KEY).base_url, "http://localhost:8080")
        with mock.patch.dict(os.environ, {"PRESSROOM_BASE_URL": "https://env.example.com/"}):
            self.assertEqual(Pressroom(api_key=API_KEY).base_url, "https://env.example.com")
            self.assertEqual(Pressroom(api_key=API_KEY, base_url="https://api.example.com//").base_url, "https://api.example.com")

    def test_refuses_bad_settings(self) -> None:
        for kwargs in (
            {"base_url": "not a url"},
            {"base_url": "ftp://x"},
            {"base_url": "https://x/?a=1"},
            {"timeout": 0},
            {"max_retries": -1},
            {"max_retry_wait": -1},
        ):
            with self.subTest(kwargs), self.assertRaises(ValueError):
                Pressroom(api_key=API_KEY, **kwargs)

    def test_the_key_never_shows_in_its_repr(self) -> None:
        client = Pressroom(api_key=API_KEY, base_url="https://api.example.com")
        self.assertEqual(repr(client), "Pressroom(base_url='https://api.example.com')")
        self.assertNotIn(API_KEY, str(client))


class Endpoints(ServerTest):
    def test_render_posts_json_with_the_bearer_key(self) -> None:
        self.server.handler = lambda request: json_reply(200, SUCCEEDED)
        data = {"number": "INV-1", "total": 12.5, "items": [{"name": "Zoë"}]}
        result = self.client.render(template_id="invoice", data=data)
        self.assertIsInstance(result, RenderResult)
        self.assertEqual(
            (result.id, result.status, result.url, result.expires_at, result.content_type, result.size_bytes), tuple(SUCCEEDED.values())
        )
        self.assertEqual(result["url"], SUCCEEDED["url"])
        request = self.server.last
        self.assertEqual((request.method, request.path), ("POST", "/v1/render"))
        self.assertEqual(request.headers["authorization"], f"Bearer {API_KEY}")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(request.headers["accept"], "application/json")
        self.assertRegex(request.headers["user-agent"], r"^pressroom-python/\d")
        self.assertNotIn("idempotency-key", request.headers, "no retries, no key")
        self.assertEqual(request.json(), {"template_id": "invoice", "data": data})

    def test_render_with_html_and_webhook_url_is_queued(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_02", "status": "queued"}, {"Location": "/v1/jobs/job_02"})
        queued = self.client.render(html="<h1>{{title}}</h1>", data={"title": "Hi"}, webhook_url="https://example.com/hook")
        self.assertEqual((queued.id, queued.status, queued.url, queued.size_bytes), ("job_02", "queued", None, None))
        self.assertEqual(
            self.server.last.json(), {"html": "<h1>{{title}}</h1>", "data": {"title": "Hi"}, "webhook_url": "https://example.com/hook"}
        )

    def test_render_and_image_send_a_destination_as_given(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_04", "status": "queued"}, {"Location": "/v1/jobs/job_04"})
        destination: Destination = {"url": "https://bucket.example.com/a.pdf?X-Amz-Signature=abc", "headers": {"x-amz-meta-run": "7"}}
        self.client.render(html="<p>x</p>", data={}, asynchronous=True, destination=destination)
        self.assertEqual(self.server.last.json()["destination"], destination)
        self.client.image(url="https://example.com/", data={}, destination={"url": "https://bucket.example.com/a.png"})
        self.assertEqual(self.server.last.json()["destination"], {"url": "https://bucket.example.com/a.png"})
        self.client.render(html="<p>x</p>", data={})
        self.assertNotIn("destination", self.server.last.json(), "sent only when given")

    def test_render_and_image_asynchronous_send_async_and_wait_for_job_polls_until_the_end(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_03", "status": "queued"}, {"Location": "/v1/jobs/job_03"})
        queued = self.client.render(html="<p>x</p>", data={}, asynchronous=True)
        self.assertEqual((queued.id, queued.status), ("job_03", "queued"))
        self.assertEqual(self.server.last.json(), {"html": "<p>x</p>", "data": {}, "async": True})
        self.client.image(url="https://example.com/", data={}, asynchronous=True)
        self.assertEqual(self.server.last.json(), {"url": "https://example.com/", "data": {}, "async": True})
        self.client.render(html="<p>x</p>", data={})
        self.assertNotIn("async", self.server.last.json(), "sent only when asked for")

        states = iter(["queued", "rendering", "succeeded"])
        self.server.handler = lambda request: json_reply(200, {"id": "job_03", "status": next(states)})
        job = self.client.wait_for_job("job_03", interval=0.01)
        self.assertEqual(job.status, "succeeded")
        self.assertEqual([r.path for r in self.server.requests[-3:]], ["/v1/jobs/job_03"] * 3)
        self.server.handler = lambda request: json_reply(200, {"id": "job_04", "status": "rendering"})
        with self.assertRaises(PressroomError) as raised:
            self.client.wait_for_job("job_04", timeout=0.05, interval=0.01)
        self.assertEqual((raised.exception.code, raised.exception.status), ("TIMEOUT", 0))

    def test_render_and_image_send_test_only_when_asked_for(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_05", "status": "queued", "test": True})
        self.client.render(html="<p>x</p>", data={}, test=True)
        self.assertEqual(self.server.last.json(), {"html": "<p>x</p>", "data": {}, "test": True})
        self.client.image(template_id="og-image", data={}, test=True)
        self.assertEqual(self.server.last.json(), {"template_id": "og-image", "data": {}, "test": True})
        self.client.render(html="<p>x</p>", data={})
        self.assertNotIn("test", self.server.last.json())

    def test_wait_for_slot_sends_prefer_wait_and_is_checked(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_05", "status": "queued"})
        self.client.render(html="<p>x</p>", data={}, wait_for_slot=30)
        self.assertEqual(self.server.last.headers["prefer"], "wait=30")
        self.client.image(template_id="og-image", data={}, wait_for_slot=60, as_bytes=True)
        self.assertEqual(self.server.last.headers["prefer"], "wait=60")
        self.client.render(html="<p>x</p>", data={})
        self.assertNotIn("prefer", self.server.last.headers)
        for bad in (0, 61, 1.5, True):
            with self.subTest(bad), self.assertRaises(ValueError):
                self.client.render(html="<p>x</p>", data={}, wait_for_slot=bad)  # type: ignore[arg-type]

    def test_render_documents_sends_the_parts_in_order(self) -> None:
        self.server.handler = lambda request: json_reply(200, SUCCEEDED)
        parts = [{"template_id": "invoice", "data": {"number": "1"}}, {"html": "<p>Terms</p>", "options": {"format": "A5"}}]
        self.client.render(documents=parts, data={})
        self.assertEqual(self.server.last.json(), {"documents": parts, "data": {}})

    def test_url_options_are_sent_beside_the_url_of_a_render_a_part_and_an_image(self) -> None:
        self.server.handler = lambda request: json_reply(200, SUCCEEDED)
        url_options = {"headers": {"X-Tenant": "acme"}, "cookies": [{"name": "session", "value": "abc"}], "basic_auth": {"username": "a", "password": "b"}}
        self.client.render(url="https://example.com/r", url_options=url_options, data={})
        self.assertEqual(self.server.last.json(), {"url": "https://example.com/r", "url_options": url_options, "data": {}})
        self.client.render(documents=[{"url": "https://example.com/r", "url_options": url_options}], data={})
        self.assertEqual(self.server.last.json()["documents"][0]["url_options"], url_options)
        self.client.image(url="https://example.com/r", url_options={"user_agent": "Bot/1"}, data={})
        self.assertEqual(self.server.last.json(), {"url": "https://example.com/r", "url_options": {"user_agent": "Bot/1"}, "data": {}})
        self.client.render(url="https://example.com/r", data={})
        self.assertNotIn("url_options", self.server.last.json(), "sent only when given")

    def test_render_as_bytes_asks_for_the_pdf_and_returns_it_with_the_job(self) -> None:
        pdf = b"%PDF-1.7\n...%%EOF\n"
        headers = {
            "Content-Type": "application/pdf",
            "Pressroom-Job-Id": "job_01",
            "Content-Location": SUCCEEDED["url"],
            "Pressroom-Expires-At": SUCCEEDED["expires_at"],
        }
        self.server.handler = always(Reply(200, pdf, headers))
        result = self.client.render(template_id="invoice", data={}, as_bytes=True, idempotency_key="doc-1")
        self.assertEqual(self.server.last.headers["accept"], "application/pdf")
        self.assertEqual(self.server.last.headers["idempotency-key"], "doc-1")
        self.assertEqual(result.content, pdf)
        self.assertEqual(
            (result.id, result.status, result.url, result.expires_at, result.content_type, result.size_bytes),
            ("job_01", "succeeded", SUCCEEDED["url"], SUCCEEDED["expires_at"], "application/pdf", len(pdf)),
        )

    def test_image_as_bytes_asks_for_png_and_a_running_job_comes_back_queued(self) -> None:
        self.server.handler = lambda request: json_reply(202, {"id": "job_04", "status": "queued"})
        result = self.client.image(template_id="og-image", data={}, as_bytes=True)
        self.assertEqual(self.server.last.headers["accept"], "image/png")
        self.assertEqual((result.status, result.content), ("queued", None))

    def test_as_bytes_downloads_when_the_service_answers_json_and_refuses_a_webhook(self) -> None:
        pdf = b"%PDF-1.7 fallback"
        url = f"{self.server.base_url}/v1/outputs/out_1?exp=1&sig=ab"
        self.server.handler = lambda request: (
            json_reply(200, {**SUCCEEDED, "url": url}) if request.method == "POST" else Reply(200, pdf, {"Content-Type": "application/pdf"})
        )
        self.assertEqual(self.client.render(html="<p>x</p>", data={}, as_bytes=True).content, pdf)
        self.assertNotIn("authorization", self.server.last.headers)
        with self.assertRaisesRegex(ValueError, "as_bytes needs a synchronous render"):
            self.client.render(html="<p>x</p>", data={}, webhook_url="https://example.com/hook", as_bytes=True)

    def test_image_posts_to_v1_image(self) -> None:
        self.server.handler = lambda request: json_reply(200, {**SUCCEEDED, "content_type": "image/png"})
        result = self.client.image(template_id="social-card", data={"title": "Launch"})
        self.assertEqual(result.content_type, "image/png")
        self.assertEqual((self.server.last.method, self.server.last.path), ("POST", "/v1/image"))
        self.assertEqual(self.server.last.json(), {"template_id": "social-card", "data": {"title": "Launch"}})

    def test_url_and_options_are_sent_as_given_and_an_image_asks_for_its_format(self) -> None:
        self.server.handler = lambda request: json_reply(200, SUCCEEDED)
        options = {"format": "A5", "margin": {"top": "20mm"}, "wait_for": {"selector": "#ready"}, "filename": "report.pdf"}
        self.client.render(url="https://example.com/report", data={}, options=options)
        self.assertEqual(self.server.last.json(), {"url": "https://example.com/report", "data": {}, "options": options})
        self.server.handler = lambda request: json_reply(202, {"id": "job_05", "status": "queued"})
        self.client.image(url="https://example.com/", data={}, options={"format": "webp", "width": 800}, as_bytes=True)
        self.assertEqual(self.server.last.headers["accept"], "image/webp")
        self.assertEqual(self.server.last.json(), {"url": "https://example.com/", "data": {}, "options": {"format": "webp", "width": 800}})

    def test_templates_usage_webhook_secret_and_job_are_keyed_gets(self) -> None:
        answers: dict[str, Any] = {
            "/v1/templates": {"templates": [{"id": "invoice", "name": "Invoice", "output": "pdf", "page": {"format": "A4"}}]},
            "/v1/keys/usage": {
                "plan": "free",
                "renders": {"used": 1, "limit": 100, "remaining": 99},
                "previews": {"used": 2, "limit": 300, "remaining": 298},
                "test": {"used": 3, "limit": 20, "remaining": 17},
            },
            "/v1/keys/webhook-secret": {"secret": "whsec_abc"},
            "/v1/jobs/job_01%2F..": {"id": "job_01/..", "status": "queued", "events": [{"type": "job.accepted"}]},
        }
        self.server.handler = lambda request: json_reply(200, answers[request.path])
        templates = self.client.templates().templates
        self.assertEqual([t.id for t in templates], ["invoice"])
        self.assertEqual(templates[0]["page"].format, "A4")
        self.assertIsNone(templates[0].width, "a named field the answer lacks is None")
        self.assertIsNone(templates[0].device_scale_factor, "a pdf template has no device_scale_factor")
        usage = self.client.usage()
        self.assertEqual((usage.renders.remaining, usage.previews.remaining), (99, 298))
        self.assertEqual((usage.test.used, usage.test.limit, usage.test.remaining), (3, 20, 17))
        secret = self.client.webhook_secret()
        self.assertEqual((secret, secret.secret), ({"secret": "whsec_abc"}, "whsec_abc"))
        job = self.client.job("job_01/..")
        self.assertIsInstance(job, Job)
        self.assertEqual((job.status, job.events[0].type), ("queued", "job.accepted"))
        with self.assertRaises(AttributeError):
            job.no_such_field  # noqa: B018
        self.assertEqual(
            [(r.method, r.path, r.headers["authorization"], r.body) for r in self.server.requests],
            [("GET", path, f"Bearer {API_KEY}", b"") for path in answers],
        )

    def test_own_templates_create_update_get_versions_delete(self) -> None:
        entry = {"id": "letter", "version": 1, "name": "Letter", "output": "pdf", "visibility": "private"}

        def handler(request: Recorded) -> Reply:
            if request.method == "DELETE":
                return Reply(204)
            if request.path.endswith("/versions"):
                return json_reply(200, {"versions": [{"version": 2, "created_at": "b"}, {"version": 1, "created_at": "a"}]})
            return json_reply(201 if request.method == "POST" else 200, entry)

        self.server.handler = handler
        created = self.client.create_template(id="letter", name="Letter", output="pdf", html="<p>{{x}}</p>", assets={"logo.png": b"\x00\xff"})
        self.assertEqual((created.id, created.visibility), ("letter", "private"))
        self.client.update_template("letter", name="Letter", output="pdf", html="<p>2</p>", options={"margin": {"top": "2cm"}, "metadata": {"title": "T"}})
        self.assertEqual(self.client.template("letter").version, 1)
        self.client.template("letter", version=1)
        self.assertEqual([v.version for v in self.client.template_versions("letter").versions], [2, 1])
        self.assertIsNone(self.client.delete_template("letter"))
        self.assertEqual(
            [(r.method, r.path) for r in self.server.requests],
            [
                ("POST", "/v1/templates"),
                ("PUT", "/v1/templates/letter"),
                ("GET", "/v1/templates/letter"),
                ("GET", "/v1/templates/letter/versions/1"),
                ("GET", "/v1/templates/letter/versions"),
                ("DELETE", "/v1/templates/letter"),
            ],
        )
        self.assertEqual(
            self.server.requests[0].json(),
            {"id": "letter", "name": "Letter", "output": "pdf", "html": "<p>{{x}}</p>", "assets": {"logo.png": "AP8="}},
        )
        self.assertEqual(
            self.server.requests[1].json(),
            {"name": "Letter", "output": "pdf", "html": "<p>2</p>", "options": {"margin": {"top": "2cm"}, "metadata": {"title": "T"}}},
        )

    def test_previews_a_versions_png_by_its_path_and_a_drafts_posted_as_a_template_body(self) -> None:
        png = b"\x89PNG\x01\x02"
        self.server.handler = always(Reply(200, png, {"Content-Type": "image/png"}))
        self.assertEqual(self.client.template_preview("letter"), png)
        self.assertEqual(self.client.template_preview("letter", version=2), png)
        self.assertEqual(self.client.preview_template(name="Draft", output="pdf", html="<p>{{x}}</p>", assets={"logo.png": b"\x00\xff"}), png)
        self.assertEqual(
            [(r.method, r.path, r.headers["accept"], r.headers["authorization"]) for r in self.server.requests],
            [
                ("GET", "/v1/templates/letter/preview.png", "image/png", f"Bearer {API_KEY}"),
                ("GET", "/v1/templates/letter/versions/2/preview.png", "image/png", f"Bearer {API_KEY}"),
                ("POST", "/v1/templates/preview", "image/png", f"Bearer {API_KEY}"),
            ],
        )
        self.assertEqual(self.server.requests[2].json(), {"name": "Draft", "output": "pdf", "html": "<p>{{x}}</p>", "assets": {"logo.png": "AP8="}})
        self.server.handler = always(json_reply(422, {"error": "html: does not compile at line 1, column 4: x", "code": "PAYLOAD_INVALID", "hint": "Fix it."}))
        with self.assertRaises(PressroomError) as raised:
            self.client.preview_template(name="Draft", output="pdf", html="<p>{{#if x}</p>")
        self.assertEqual((raised.exception.status, raised.exception.code), (422, "PAYLOAD_INVALID"))

    def test_the_lists_send_only_the_filters_given_and_replay_posts_to_the_delivery(self) -> None:
        delivery = {"id": "dlv_1", "event_id": "evt_1", "event_type": "job.succeeded", "job_id": "job_1", "attempt": 3, "status": "pending"}

        def handler(request: Recorded) -> Reply:
            if request.method == "POST":
                return json_reply(202, delivery)
            if request.path.startswith("/v1/keys"):
                return json_reply(200, {"data": [{"date": "2026-12-01", "succeeded": 2, "failed": 1, "refunded": 0}]})
            if request.path.startswith("/v1/jobs"):
                return json_reply(200, {"data": [{"id": "job_1", "status": "succeeded", "events": []}], "next_cursor": "czE"})
            return json_reply(200, {"data": [delivery], "next_cursor": None})

        self.server.handler = handler
        page = self.client.jobs()
        self.assertIsInstance(page.data[0], Job)
        self.assertEqual((page.data[0].status, page.next_cursor), ("succeeded", "czE"))
        self.client.jobs(status="failed", kind="image", template_id="card", limit=5, cursor="czE")
        days = self.client.daily_usage(from_date="2026-12-01", to_date="2026-12-31").data
        self.assertEqual((days[0].date, days[0].failed), ("2026-12-01", 1))
        self.client.daily_usage()
        deliveries = self.client.webhook_deliveries(job_id="job_1", limit=2)
        self.assertEqual((deliveries.data[0].attempt, deliveries.next_cursor, deliveries.data[0].response_status), (3, None, None))
        self.assertEqual(self.client.replay_webhook_delivery("dlv_1").status, "pending")
        self.assertEqual(
            [(r.method, r.path) for r in self.server.requests],
            [
                ("GET", "/v1/jobs"),
                ("GET", "/v1/jobs?status=failed&kind=image&template_id=card&limit=5&cursor=czE"),
                ("GET", "/v1/keys/usage/daily?from=2026-12-01&to=2026-12-31"),
                ("GET", "/v1/keys/usage/daily"),
                ("GET", "/v1/webhooks/deliveries?job_id=job_1&limit=2"),
                ("POST", "/v1/webhooks/deliveries/dlv_1/replay"),
            ],
        )
        self.assertTrue(all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in self.server.requests))

    def test_batches_create_read_page_and_cancel(self) -> None:
        batch = {"id": "bat_1", "status": "accepted", "total": 2, "counts": {"queued": 2, "running": 0, "succeeded": 0, "failed": 0}, "created_at": "2026-11-28T00:00:00Z", "archive": None}
        archive = {"url": "https://x/v1/outputs/out_1?exp=1&sig=2", "expires_at": "2026-11-29T00:00:00Z", "size_bytes": 10}

        def handler(request: Recorded) -> Reply:
            if request.method == "GET" and request.path == "/v1/batches/bat_1":
                return json_reply(200, {**batch, "status": "completed", "archive": archive})
            if request.path.endswith("/items?limit=1&cursor=0"):
                return json_reply(200, {"data": [{"index": 1, "job_id": "job_2", "status": "failed", "error": {"code": "CANCELLED", "message": "x"}}], "next_cursor": None})
            if request.method == "DELETE":
                return json_reply(200, {**batch, "status": "cancelled"})
            return json_reply(202 if request.method == "POST" else 200, batch)

        self.server.handler = handler
        items = [{"template_id": "invoice", "data": {"n": 1}}, {"kind": "image", "template_id": "social-card", "data": {}}]
        created = self.client.create_batch(items, webhook_url="https://example.com/hook", archive=True, idempotency_key="month-end")
        self.assertEqual((created.id, created.status, created.counts.queued, created.archive), ("bat_1", "accepted", 2, None))
        first = self.server.requests[0]
        self.assertEqual((first.method, first.path, first.headers.get("idempotency-key")), ("POST", "/v1/batches", "month-end"))
        self.assertEqual(first.json(), {"items": items, "webhook_url": "https://example.com/hook", "archive": True})
        ended = self.client.batch("bat_1")
        self.assertEqual((ended.total, ended.archive.url, ended.archive.size_bytes), (2, archive["url"], 10))
        page = self.client.batch_items("bat_1", limit=1, cursor="0")
        self.assertEqual((page.data[0].index, page.data[0].error.code, page.data[0].url, page.next_cursor), (1, "CANCELLED", None, None))
        self.assertEqual(self.client.cancel_batch("bat_1").status, "cancelled")
        self.assertEqual(
            [(r.method, r.path) for r in self.server.requests[1:]],
            [("GET", "/v1/batches/bat_1"), ("GET", "/v1/batches/bat_1/items?limit=1&cursor=0"), ("DELETE", "/v1/batches/bat_1")],
        )

    def test_render_and_image_pin_a_template_version(self) -> None:
        self.server.handler = always(json_reply(200, SUCCEEDED))
        self.client.render(template_id="letter", template_version=2, data={})
        self.assertEqual(self.server.last.json(), {"template_id": "letter", "template_version": 2, "data": {}})
        self.client.image(template_id="card", template_version=1, data={})
        self.assertEqual(self.server.last.json(), {"template_id": "card", "template_version": 1, "data": {}})

    def test_checkout_posts_the_plan(self) -> None:
        self.server.handler = lambda request: json_reply(
            201, {"checkout_url": "http://x/checkout/cs_1", "session_id": "cs_1", "plan": "pro"}
        )
        session = self.client.checkout(plan="pro")
        self.assertEqual((session.session_id, session.checkout_url), ("cs_1", "http://x/checkout/cs_1"))
        self.assertEqual((self.server.last.path, self.server.last.json()), ("/v1/billing/checkout", {"plan": "pro"}))

    def test_delete_output_sends_delete_with_the_key_given_the_id_or_the_url(self) -> None:
        self.server.handler = lambda request: Reply(204)
        self.assertIsNone(self.client.delete_output("out_abc123def456"))
        self.client.delete_output(f"{self.server.base_url}/v1/outputs/out_fromurl0001?exp=1&sig={'a' * 64}")
        self.client.delete_output("/v1/outputs/out_relative01?exp=1&sig=0")
        self.assertEqual(
            [(r.method, r.path, r.headers["authorization"]) for r in self.server.requests],
            [
                ("DELETE", "/v1/outputs/out_abc123def456", f"Bearer {API_KEY}"),
                ("DELETE", "/v1/outputs/out_fromurl0001", f"Bearer {API_KEY}"),
                ("DELETE", "/v1/outputs/out_relative01", f"Bearer {API_KEY}"),
            ],
        )
        with self.assertRaisesRegex(ValueError, "an output's id or its /v1/outputs/<id> URL"):
            self.client.delete_output("https://example.com/v1/jobs/job_1")

    def test_rotate_key_posts_with_the_key_and_no_body(self) -> None:
        answer = {"api_key": "pr_live_new0123456789012345", "previous_key_expires_at": "2026-11-29T00:00:00.000Z"}
        self.server.handler = lambda request: json_reply(201, answer)
        rotated = self.client.rotate_key()
        self.assertEqual((rotated.api_key, rotated.previous_key_expires_at), (answer["api_key"], answer["previous_key_expires_at"]))
        last = self.server.last
        self.assertEqual((last.method, last.path, last.headers["authorization"], last.body), ("POST", "/v1/keys/rotate", f"Bearer {API_KEY}", b""))

    def test_signup_posts_the_email_without_a_key(self) -> None:
        self.server.handler = lambda request: json_reply(201, {"api_key": "pr_live_new0123456789", "plan": "free"})
        result = Pressroom.signup(email="ada@example.com", base_url=self.server.base_url)
        self.assertIsInstance(result, SignupResult)
        self.assertEqual((result.api_key, result.plan), ("pr_live_new0123456789", "free"))
        self.assertNotIn("pr_live_new0123456789", repr(result))
        self.assertEqual((self.server.last.method, self.server.last.path), ("POST", "/v1/signup"))
        self.assertNotIn("authorization", self.server.last.headers)
        self.assertEqual(self.server.last.json(), {"email": "ada@example.com"})

    def test_download_returns_the_bytes_and_never_sends_the_key(self) -> None:
        pdf = b"%PDF\x00\xff\x80\n"
        self.server.handler = lambda request: Reply(200, pdf, {"Content-Type": "application/pdf"})
        self.assertEqual(self.client.download(f"{self.server.base_url}/v1/outputs/out_1{SIGNED}"), pdf)
        self.assertEqual((self.server.last.method, self.server.last.path), ("GET", f"/v1/outputs/out_1{SIGNED}"))
        self.assertNotIn("authorization", self.server.last.headers)
        self.client.download("/v1/outputs/out_2?exp=1&sig=def")
        self.assertEqual(self.server.last.path, "/v1/outputs/out_2?exp=1&sig=def", "a relative URL resolves against base_url")
        self.assertNotIn("authorization", self.server.last.headers)
        with self.assertRaises(ValueError):
            self.client.download("ftp://example.com/x")


class Errors(ServerTest):
    def test_maps_the_error_body(self) -> None:
        self.server.handler = lambda request: json_reply(
            404, error_body("TEMPLATE_NOT_FOUND", 'template "nope" does not exist', "List templates.")
        )
        err = self.raised(self.client.render, template_id="nope", data={})
        self.assertEqual(
            (err.code, err.status, err.message, err.hint, err.retry_after),
            ("TEMPLATE_NOT_FOUND", 404, 'template "nope" does not exist', "List templates.", None),
        )
        self.assertEqual(str(err), 'TEMPLATE_NOT_FOUND: template "nope" does not exist')
        self.assertEqual(repr(pickle.loads(pickle.dumps(err))), repr(err))

    def test_maps_401_and_422(self) -> None:
        self.server.handler = lambda request: json_reply(401, error_body("AUTH_INVALID"), {"WWW-Authenticate": "Bearer"})
        self.assertEqual((lambda e: (e.code, e.status))(self.raised(self.client.usage)), ("AUTH_INVALID", 401))
        self.server.handler = lambda request: json_reply(422, error_body("PAYLOAD_INVALID", "webhook_url: must be https", "Use https."))
        err = self.raised(self.client.render, html="x", data={}, webhook_url="http://x")
        self.assertEqual((err.code, err.status, err.hint), ("PAYLOAD_INVALID", 422, "Use https."))

    def test_reads_retry_after_on_the_three_429_codes(self) -> None:
        for code, seconds in (("RATE_LIMITED", "7"), ("QUOTA_EXCEEDED", "86400"), ("CONCURRENCY_EXCEEDED", "1")):
            self.server.handler = always(json_reply(429, error_body(code), {"Retry-After": seconds}))
            err = self.raised(self.client.render, template_id="invoice", data={})
            self.assertEqual((err.code, err.status, err.retry_after), (code, 429, int(seconds)))
        self.server.handler = lambda request: json_reply(429, error_body("RATE_LIMITED"), {"Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT"})
        self.assertEqual(self.raised(self.client.usage).retry_after, 0, "an HTTP-date in the past is 0 s away")

    def test_an_answer_without_the_error_shape_is_internal_error(self) -> None:
        replies = [
            (Reply(502, b"<html>Bad Gateway</html>", {"Content-Type": "text/html"}), 502),
            (json_reply(500, {"message": "boom"}), 500),
            (json_reply(503, ["not", "an", "object"], {"Retry-After": "3"}), 503),
            (Reply(200, b"ok", {"Content-Type": "text/plain"}), 200),
        ]
        for reply, status in replies:
            self.server.handler = always(reply)
            err = self.raised(self.client.templates)
            self.assertEqual((err.code, err.status), ("INTERNAL_ERROR", status))
        self.assertEqual(err.retry_after, None)

    def test_download_maps_expired_and_tampered_urls_without_the_signature(self) -> None:
        for status, code in ((410, "URL_EXPIRED"), (403, "URL_INVALID")):
            self.server.handler = always(json_reply(status, error_body(code)))
            err = self.raised(self.client.download, f"{self.server.base_url}/v1/outputs/out_1{SIGNED}")
            self.assertEqual((err.code, err.status), (code, status))
            self.assertNotIn("5ecret5ignature", traceback_of(err))

    def test_does_not_follow_redirects(self) -> None:
        elsewhere = TestServer()
        self.addCleanup(elsewhere.close)
        self.server.handler = lambda request: Reply(302, b"", {"Location": f"{elsewhere.base_url}/steal"})
        err = self.raised(self.client.usage)
        self.assertEqual((err.code, err.status), ("INTERNAL_ERROR", 302))
        self.assertEqual(elsewhere.requests, [], "the key went nowhere else")

    def test_a_timeout_is_timeout_with_status_0_and_no_signature(self) -> None:
        def stall(request: Recorded) -> Reply:
            self.server.release.wait()
            return json_reply(200, SUCCEEDED)

        self.server.handler = stall
        slow = Pressroom(api_key=API_KEY, base_url=self.server.base_url, timeout=0.2)
        err = self.raised(slow.download, f"{self.server.base_url}/v1/outputs/out_1{SIGNED}")
        self.assertEqual((err.code, err.status), ("TIMEOUT", 0))
        self.assertNotIn("5ecret5ignature", traceback_of(err))
        self.assertEqual(self.raised(slow.render, template_id="invoice", data={}).code, "TIMEOUT")

    def test_an_unreachable_service_is_connection_error_with_status_0(self) -> None:
        client = Pressroom(api_key=API_KEY, base_url=f"http://127.0.0.1:{closed_port()}")
        err = self.raised(client.download, f"/v1/outputs/out_1{SIGNED}")
        self.assertEqual((err.code, err.status), ("CONNECTION_ERROR", 0))
        self.assertIn("could not reach http://127.0.0.1:", err.message)
        self.assertNotIn("5ecret5ignature", traceback_of(err))

    def test_a_url_that_urllib_refuses_is_connection_error_without_the_signature(self) -> None:
        err = self.raised(self.client.download, f"{self.server.base_url}/v1/outputs/out 1{SIGNED}")
        self.assertEqual((err.code, err.status), ("CONNECTION_ERROR", 0))
        self.assertIn("sig=[redacted]", err.message)
        self.assertNotIn("5ecret5ignature", traceback_of(err))
        self.assertEqual(self.server.requests, [])


class Redaction(unittest.TestCase):
    def test_reprs_hide_url_signatures_and_keys(self) -> None:
        url = f"https://pressroom.example.com/v1/outputs/out_1{SIGNED}"
        for obj in (
            RenderResult({**SUCCEEDED, "url": url}),
            Job({"id": "job_1", "url": url, "events": []}),
            ApiObject({"nested": {"url": url}}),
        ):
            with self.subTest(type(obj).__name__):
                self.assertNotIn("5ecret5ignature", repr(obj))
                self.assertNotIn("5ecret5ignature", str(obj))
                self.assertIn("sig=[redacted]", repr(obj))
        self.assertEqual(RenderResult({"url": url}).url, url, "the value itself is intact")
        self.assertNotIn("0123456789abcdef", repr(SignupResult({"api_key": API_KEY, "plan": "free"})))


if __name__ == "__main__":
    unittest.main()
