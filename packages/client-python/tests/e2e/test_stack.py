"""The Python client against the real stack: six services, Postgres, NATS JetStream, Chromium.

Run by test/src/client-python.e2e.test.ts, which starts the stack and passes
its address, keys and the webhook receiver's port and certificate in the
environment (see REQUIRED below).
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
import unittest
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from unittest import mock

from pressroom import SIGNATURE_HEADER, Pressroom, PressroomError, verify_signature

REQUIRED = (
    "PRESSROOM_E2E_BASE_URL",
    "PRESSROOM_E2E_API_KEY",
    "PRESSROOM_E2E_DEMO_KEY",
    "PRESSROOM_E2E_QUOTA_KEY",
    "PRESSROOM_E2E_WEBHOOK_PORT",
    "PRESSROOM_E2E_WEBHOOK_CERT",
    "PRESSROOM_E2E_WEBHOOK_KEY",
)
WAIT_SECONDS = 90


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: these tests need a running stack. Run them with "
            "`node --import tsx --test test/src/client-python.e2e.test.ts` from the repository root, "
            "which starts one and sets " + ", ".join(REQUIRED)
        )
    return value


class Callback:
    """One delivery as the receiver got it, and what it answered."""

    def __init__(self, path: str, signature: Optional[str], raw_body: bytes, status: int) -> None:
        self.path = path
        self.signature = signature
        self.raw_body = raw_body
        self.status = status


class WebhookReceiver:
    """A real HTTPS receiver, as a customer's Flask or FastAPI app would be: verify, then parse.

    It answers 204 to a delivery whose signature checks out and 401 otherwise.
    """

    def __init__(self, port: int, cert: str, key: str, secret: str) -> None:
        self.callbacks: list[Callback] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw_body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                signature = self.headers.get(SIGNATURE_HEADER)
                status = 204 if verify_signature(raw_body, signature, secret) else 401
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with receiver.arrived:
                    receiver.callbacks.append(Callback(self.path, signature, raw_body, status))
                    receiver.arrived.notify_all()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def wait_for(self, path: str, count: int = 1) -> Callback:
        """The ``count``-th callback on ``path`` (the first by default), once it arrived."""
        deadline = time.monotonic() + WAIT_SECONDS
        with self.arrived:
            while True:
                found = [c for c in self.callbacks if c.path == path]
                if len(found) >= count:
                    return found[count - 1]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(found)} of {count} callbacks on {path} within {WAIT_SECONDS} s")
                self.arrived.wait(left)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


class Stack(unittest.TestCase):
    client: Pressroom
    base_url: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url = setting("PRESSROOM_E2E_BASE_URL")
        cls.client = Pressroom(api_key=setting("PRESSROOM_E2E_API_KEY"), base_url=cls.base_url)

    def raised(self, call: Any, *args: Any, **kwargs: Any) -> PressroomError:
        with self.assertRaises(PressroomError) as caught:
            call(*args, **kwargs)
        return caught.exception

    def sample(self, template_id: str) -> Any:
        return next(t for t in self.client.templates().templates if t.id == template_id).sample_data


class Rendering(Stack):
    def test_render_then_download_without_sending_the_key(self) -> None:
        result = self.client.render(html="<h1>Hello {{name}}</h1>", data={"name": "Ada"})
        self.assertEqual((result.status, result.content_type), ("succeeded", "application/pdf"))
        self.assertRegex(result.id, r"^job_")
        self.assertIn("sig=", result.url or "")
        self.assertNotIn(result.url or "", repr(result), "the signed URL stays out of reprs")
        self.assertIsNotNone(result.expires_at)

        sent = []
        opener = self.client._transport._opener
        real_open = opener.open

        def recording_open(request: Any, *args: Any, **kwargs: Any) -> Any:
            sent.append(dict(request.header_items()))
            return real_open(request, *args, **kwargs)

        with mock.patch.object(opener, "open", side_effect=recording_open):
            pdf = self.client.download(result.url or "")
        self.assertTrue(pdf.startswith(b"%PDF-"))
        self.assertEqual(len(pdf), result.size_bytes)
        self.assertEqual(len(sent), 1)
        self.assertNotIn("Authorization", sent[0], "the signed URL is the credential: no key is sent")

    def test_render_as_bytes_gets_the_pdf_in_the_same_request(self) -> None:
        result = self.client.render(html="<h1>Hello {{name}}</h1>", data={"name": "Ada"}, as_bytes=True)
        self.assertEqual((result.status, result.content_type), ("succeeded", "application/pdf"))
        self.assertTrue((result.content or b"").startswith(b"%PDF-"))
        self.assertEqual(result.size_bytes, len(result.content or b""))
        self.assertEqual(self.client.job(result.id).status, "succeeded")
        self.assertEqual(self.client.download(result.url or ""), result.content, "the stored output is the document answered")

    def test_image_as_bytes(self) -> None:
        result = self.client.image(template_id="social-card", data=self.sample("social-card"), as_bytes=True)
        self.assertEqual(result.content_type, "image/png")
        self.assertTrue((result.content or b"").startswith(b"\x89PNG\r\n\x1a\n"))

    def test_render_a_template_with_retries_on(self) -> None:
        retrying = Pressroom(api_key=setting("PRESSROOM_E2E_API_KEY"), base_url=self.base_url, max_retries=2)
        result = retrying.render(template_id="invoice", data=self.sample("invoice"))
        self.assertEqual(result.status, "succeeded")
        self.assertTrue(retrying.download(result.url or "").startswith(b"%PDF-"))

    def test_image(self) -> None:
        result = self.client.image(template_id="social-card", data=self.sample("social-card"))
        self.assertEqual((result.status, result.content_type), ("succeeded", "image/png"))
        self.assertTrue(self.client.download(result.url or "").startswith(b"\x89PNG\r\n\x1a\n"))

    def test_templates_usage_secret_and_job(self) -> None:
        templates = self.client.templates().templates
        self.assertIn("invoice", [t.id for t in templates])
        self.assertEqual({t.output for t in templates}, {"pdf", "png"})
        usage = self.client.usage()
        self.assertEqual(usage.plan, "business")
        self.assertGreater(usage.renders.limit, 0)
        self.assertEqual(usage.previews.limit, 3 * usage.renders.limit)
        self.assertRegex(self.client.webhook_secret().secret, r"^whsec_")
        result = self.client.render(html="<p>{{n}}</p>", data={"n": 1})
        job = self.client.job(result.id)
        self.assertEqual((job.id, job.status, job.kind), (result.id, "succeeded", "render"))
        self.assertEqual([e.type for e in job.events][:3], ["job.accepted", "job.started", "job.succeeded"])
        self.assertEqual(self.raised(self.client.job, "job_00000000000000000000000000").code, "NOT_FOUND")


class Keys(Stack):
    def test_rotate_key_the_new_key_works_at_once_and_the_old_one_still_does(self) -> None:
        rotated = self.client.rotate_key()
        self.assertRegex(rotated.api_key, r"^pr_live_[0-9A-Za-z]{33}$")
        self.assertNotIn(rotated.api_key, repr(rotated), "the key stays out of reprs")
        expires_at = datetime.fromisoformat(rotated.previous_key_expires_at.replace("Z", "+00:00"))
        hours_left = (expires_at - datetime.now(timezone.utc)).total_seconds() / 3600
        self.assertTrue(23.9 < hours_left <= 24, hours_left)
        fresh = Pressroom(api_key=rotated.api_key, base_url=self.base_url)
        self.assertEqual(fresh.usage().plan, "business")
        self.assertEqual(self.client.usage().plan, "business", "the replaced key works until previous_key_expires_at")
        self.assertEqual(fresh.webhook_secret(), self.client.webhook_secret(), "one account")


class OwnTemplates(Stack):
    def test_create_update_pin_get_versions_delete(self) -> None:
        schema = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
        style = b"h1::after{content:' (styled)'}"
        created = self.client.create_template(
            id="py-letter",
            name="Letter",
            output="pdf",
            html='<link rel="stylesheet" href="assets/style.css"><h1>One {{who}}</h1>',
            data_schema=schema,
            sample_data={"who": "Sample"},
            assets={"style.css": style},
        )
        self.assertEqual((created.id, created.version, created.visibility), ("py-letter", 1, "private"))
        updated = self.client.update_template("py-letter", name="Letter", output="pdf", html="<h1>Two {{who}}</h1>", data_schema=schema, sample_data={"who": "S"})
        self.assertEqual(updated.version, 2)
        changed = self.raised(self.client.update_template, "py-letter", name="Letter", output="png", html="<p>x</p>", width=100, height=100)
        self.assertEqual((changed.code, changed.status), ("PAYLOAD_INVALID", 422), "a version cannot change the output")
        self.assertEqual(self.client.template("py-letter").version, 2)
        first = self.client.template("py-letter", version=1)
        self.assertEqual(first.version, 1)
        self.assertEqual([(a.name, a.size_bytes) for a in first.assets], [("style.css", len(style))])
        self.assertEqual(self.client.template_asset("py-letter", 1, "style.css"), style)
        self.assertEqual(self.client.template("py-letter").assets, [], "version 2 has no assets")
        self.assertEqual(self.raised(self.client.template_asset, "py-letter", 2, "style.css").code, "NOT_FOUND")
        self.assertEqual([v.version for v in self.client.template_versions("py-letter").versions], [2, 1])
        self.assertIn("py-letter", [t.id for t in self.client.templates().templates if t.visibility == "private"])
        pinned = self.client.render(template_id="py-letter", template_version=1, data={"who": "Ada"}, as_bytes=True)
        self.assertEqual(self.client.job(pinned.id).template_version, 1)
        current = self.client.render(template_id="py-letter", data={"who": "Ada"})
        self.assertEqual(self.client.job(current.id).template_version, 2)
        self.assertEqual(self.raised(self.client.create_template, id="py-letter", name="x", output="pdf", html="<p>x</p>").code, "TEMPLATE_EXISTS")
        self.assertIsNone(self.client.delete_template("py-letter"))
        self.assertEqual(self.raised(self.client.template, "py-letter").code, "TEMPLATE_NOT_FOUND")
        self.assertEqual(self.raised(self.client.render, template_id="py-letter", data={"who": "Ada"}).code, "TEMPLATE_NOT_FOUND")

    def test_a_draft_previews_unsaved_and_each_version_keeps_its_preview(self) -> None:
        card = {"name": "Card", "output": "png", "width": 90, "height": 60, "html": '<body style="background:{{c}}">{{c}}</body>'}
        draft = self.client.preview_template(**card, sample_data={"c": "red"})
        self.assertEqual(draft[:8], b"\x89PNG\r\n\x1a\n")
        self.assertNotIn("draft", [t.id for t in self.client.templates().templates])
        error = self.raised(self.client.preview_template, **{**card, "html": "<p>one</p>\n<p>{{#if c}</p>"})
        self.assertEqual((error.code, error.status), ("PAYLOAD_INVALID", 422))
        self.assertIn("line 2", error.message)
        self.client.create_template(id="py-card", **card, sample_data={"c": "red"})
        updated = self.client.update_template("py-card", **card, sample_data={"c": "blue"})
        self.assertEqual(updated.preview_url, "/v1/templates/py-card/versions/2/preview.png")
        first, second = self.client.template_preview("py-card", version=1), self.client.template_preview("py-card", version=2)
        self.assertNotEqual(first, second)
        self.assertEqual(self.client.template_preview("py-card"), second)
        self.client.delete_template("py-card")

    def test_a_template_whose_preview_fails_is_render_failed(self) -> None:
        error = self.raised(self.client.create_template, id="py-broken", name="x", output="pdf", html="<script>throw new Error('nope')</script>")
        self.assertEqual((error.code, error.status), ("RENDER_FAILED", 422))


class Webhooks(Stack):
    def test_an_async_render_is_called_back_with_a_signature_that_verifies(self) -> None:
        secret = self.client.webhook_secret().secret
        receiver = WebhookReceiver(
            int(setting("PRESSROOM_E2E_WEBHOOK_PORT")), setting("PRESSROOM_E2E_WEBHOOK_CERT"), setting("PRESSROOM_E2E_WEBHOOK_KEY"), secret
        )
        self.addCleanup(receiver.close)
        queued = self.client.render(html="<h1>{{title}}</h1>", data={"title": "Async"}, webhook_url="https://127.0.0.1/hooks/python")
        self.assertEqual((queued.status, queued.url), ("queued", None))

        callback = receiver.wait_for("/hooks/python")
        self.assertEqual(callback.status, 204, "the receiver verified the signature")
        self.assertRegex(callback.signature or "", r"^t=\d+,v1=[0-9a-f]{64}$")
        self.assertTrue(verify_signature(callback.raw_body, callback.signature, secret))
        self.assertTrue(verify_signature(callback.raw_body.decode("utf-8"), callback.signature, secret))
        self.assertFalse(verify_signature(callback.raw_body + b" ", callback.signature, secret))
        self.assertFalse(verify_signature(callback.raw_body, callback.signature, secret + "x"))
        self.assertFalse(verify_signature(callback.raw_body, callback.signature, secret, now=time.time() + 301))

        event = json.loads(callback.raw_body)
        self.assertEqual((event["type"], event["job_id"], event["status"]), ("job.succeeded", queued.id, "succeeded"))
        self.assertTrue(self.client.download(event["url"]).startswith(b"%PDF-"))
        deadline = time.monotonic() + WAIT_SECONDS
        while self.client.job(queued.id)["webhook"]["state"] != "delivered" and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertEqual(self.client.job(queued.id)["webhook"]["last_status"], 204)

        # The lists show the job and its delivery (read models, a moment behind the job's events); a
        # replay sends the same callback again, signed afresh.
        while [d.status for d in self.client.webhook_deliveries(job_id=queued.id).data] != ["succeeded"] and time.monotonic() < deadline:
            time.sleep(0.2)
        [delivery] = self.client.webhook_deliveries(job_id=queued.id).data
        self.assertEqual((delivery.attempt, delivery.status, delivery.response_status, delivery.event_id), (1, "succeeded", 204, event["id"]))
        self.assertIn(queued.id, [job.id for job in self.client.jobs(limit=100).data])
        self.assertGreaterEqual(sum(day.succeeded for day in self.client.daily_usage().data), 1)
        replayed = self.client.replay_webhook_delivery(delivery.id)
        self.assertEqual((replayed.attempt, replayed.status, replayed.event_id), (2, "pending", event["id"]))
        again = receiver.wait_for("/hooks/python", count=2)
        self.assertEqual(json.loads(again.raw_body)["id"], event["id"])
        self.assertTrue(verify_signature(again.raw_body, again.signature, secret))


class Errors(Stack):
    def test_401_auth_invalid(self) -> None:
        bad = Pressroom(api_key="pr_live_not_a_real_key_0000000000", base_url=self.base_url)
        err = self.raised(bad.usage)
        self.assertEqual((err.code, err.status), ("AUTH_INVALID", 401))
        self.assertTrue(err.hint)

    def test_422_payload_invalid_and_404_template_not_found(self) -> None:
        err = self.raised(self.client.render, html="<p>x</p>", data={}, webhook_url="http://example.com/hook")
        self.assertEqual((err.code, err.status), ("PAYLOAD_INVALID", 422))
        self.assertIn("webhook_url", err.message)
        err = self.raised(self.client.render, template_id="no-such-template", data={})
        self.assertEqual((err.code, err.status), ("TEMPLATE_NOT_FOUND", 404))

    def test_429_rate_limited_with_retry_after(self) -> None:
        demo = Pressroom(api_key=setting("PRESSROOM_E2E_DEMO_KEY"), base_url=self.base_url)
        for _ in range(3):
            self.assertEqual(demo.usage().plan, "demo")
        err = self.raised(demo.usage)
        self.assertEqual((err.code, err.status), ("RATE_LIMITED", 429))
        self.assertIsInstance(err.retry_after, int)
        self.assertGreater(err.retry_after or 0, 0)

    def test_429_quota_exceeded_is_not_waited_for(self) -> None:
        exhausted = Pressroom(api_key=setting("PRESSROOM_E2E_QUOTA_KEY"), base_url=self.base_url, max_retries=3)
        with mock.patch("pressroom._http._sleep") as sleep:
            err = self.raised(exhausted.render, html="<p>x</p>", data={})
        self.assertEqual((err.code, err.status), ("QUOTA_EXCEEDED", 429))
        self.assertGreater(err.retry_after or 0, 60)
        sleep.assert_not_called()  # longer than max_retry_wait: raised at once, not retried


class Accounts(Stack):
    def test_signup_then_checkout(self) -> None:
        email = f"python-{uuid.uuid4().hex[:12]}@example.com"
        signed_up = Pressroom.signup(email=email, base_url=self.base_url)
        self.assertRegex(signed_up.api_key, r"^pr_live_")
        self.assertEqual(signed_up.plan, "free")
        err = self.raised(Pressroom.signup, email=email, base_url=self.base_url)
        self.assertEqual((err.code, err.status), ("AUTH_EMAIL_EXISTS", 409))

        client = Pressroom(api_key=signed_up.api_key, base_url=self.base_url)
        self.assertEqual(client.usage().plan, "free")
        session = client.checkout(plan="pro")
        self.assertEqual(session.plan, "pro")
        self.assertTrue(session.checkout_url.startswith("http"))
        self.assertTrue(session.session_id)


if __name__ == "__main__":
    unittest.main()
