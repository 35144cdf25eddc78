"""What the JavaScript client has too: the secret's rotation, a template's preview, waiting for a job, screenshots, Standard Webhooks."""

from __future__ import annotations

import hashlib
import hmac
import unittest

from support import Reply, TestServer, json_reply

from pressroom import Pressroom, PressroomError, PressroomSignatureError, construct_event, verify_standard_signature

API_KEY = "pr_test_key_0123456789abcdef"

# The example of the Standard Webhooks specification (github.com/standard-webhooks), computed by its authors.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
HEADERS = {"webhook-id": ID, "webhook-timestamp": str(TIMESTAMP), "webhook-signature": SIGNATURE}
OTHER = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


class Endpoints(unittest.TestCase):
    def setUp(self) -> None:
        self.server = TestServer()
        self.addCleanup(self.server.close)
        self.client = Pressroom(api_key=API_KEY, base_url=self.server.base_url)

    def test_rotate_webhook_secret_posts_to_the_rotation(self) -> None:
        rotated = {"secret": "whsec_bmV3LXNlY3JldA", "previous_secret_expires_at": "2026-01-02T00:00:00.000Z"}
        self.server.handler = lambda request: json_reply(200, rotated)
        answer = self.client.rotate_webhook_secret()
        self.assertEqual(answer, rotated)
        self.assertEqual(answer.previous_secret_expires_at, "2026-01-02T00:00:00.000Z")
        request = self.server.requests[-1]
        self.assertEqual((request.method, request.path), ("POST", "/v1/keys/webhook-secret/rotate"))
        self.assertEqual(request.headers["authorization"], f"Bearer {API_KEY}")

    def test_template_preview_answers_the_png_asked_with_the_key(self) -> None:
        png = b"\x89PNG\x01\x02\x03"
        self.server.handler = lambda request: Reply(200, png, {"Content-Type": "image/png"})
        self.assertEqual(self.client.template_preview("my invoice"), png)
        request = self.server.requests[-1]
        self.assertEqual(request.path, "/v1/templates/my%20invoice/preview.png")
        self.assertEqual(request.headers["authorization"], f"Bearer {API_KEY}")

    def test_wait_for_job_reads_until_it_finished_or_raises_timeout(self) -> None:
        states = iter(["queued", "rendering", "failed"])
        self.server.handler = lambda request: json_reply(200, {"id": "job_01", "status": next(states, "failed")})
        job = self.client.wait_for_job("job_01", interval=0.01)
        self.assertEqual(job.status, "failed")
        self.assertEqual([r.path for r in self.server.requests], ["/v1/jobs/job_01"] * 3)
        self.server.handler = lambda request: json_reply(200, {"id": "job_02", "status": "rendering"})
        with self.assertRaises(PressroomError) as caught:
            self.client.wait_for_job("job_02", timeout=0.05, interval=0.01)
        self.assertEqual((caught.exception.code, caught.exception.status), ("TIMEOUT", 0))

    def test_screenshot_posts_html_or_a_url_with_its_options_and_answers_the_image_asked_for(self) -> None:
        succeeded = {"id": "job_07", "status": "succeeded", "url": "http://127.0.0.1/v1/outputs/out_7?exp=1&sig=ab", "content_type": "image/png"}
        self.server.handler = lambda request: json_reply(200, succeeded)
        options = {"width": 800, "height": 600, "device_scale_factor": 2, "selector": "#chart"}
        self.assertEqual(self.client.screenshot(html="<h1>{{t}}</h1>", data={"t": "Hi"}, options=options).content_type, "image/png")
        request = self.server.requests[-1]
        self.assertEqual((request.method, request.path, request.headers["authorization"]), ("POST", "/v1/screenshot", f"Bearer {API_KEY}"))
        self.assertEqual(request.json(), {"html": "<h1>{{t}}</h1>", "data": {"t": "Hi"}, "options": options})
        self.client.screenshot(html="<p>x</p>")
        self.assertEqual(self.server.requests[-1].json(), {"html": "<p>x</p>"}, "data is left out when not given")

        self.server.handler = lambda request: json_reply(202, {"id": "job_08", "status": "queued"}, {"Location": "/v1/jobs/job_08"})
        queued = self.client.screenshot(url="https://example.com/", options={"full_page": True}, asynchronous=True)
        self.assertEqual((queued.id, queued.status), ("job_08", "queued"))
        self.assertEqual(self.server.requests[-1].json(), {"url": "https://example.com/", "options": {"full_page": True}, "async": True})

        jpeg = b"\xff\xd8\xff\xe0"
        headers = {"Content-Type": "image/jpeg", "Pressroom-Job-Id": "job_09", "Content-Location": succeeded["url"], "Pressroom-Expires-At": "2026-01-02T00:00:00.000Z"}
        self.server.handler = lambda request: Reply(200, jpeg, headers)
        shot = self.client.screenshot(url="https://example.com/", options={"format": "jpeg", "clip": {"x": 0, "y": 0, "width": 10, "height": 10}}, as_bytes=True)
        self.assertEqual(self.server.requests[-1].headers["accept"], "image/jpeg")
        self.assertEqual((shot.id, shot.content_type, shot.content), ("job_09", "image/jpeg", jpeg))


class StandardWebhooks(unittest.TestCase):
    def test_the_specifications_example_verifies_from_any_mapping_names_in_any_case(self) -> None:
        self.assertTrue(verify_standard_signature(BODY, HEADERS, SECRET, now=TIMESTAMP))
        self.assertTrue(verify_standard_signature(BODY.decode(), {k.upper(): v for k, v in HEADERS.items()}, SECRET, now=TIMESTAMP))

    def test_any_of_several_signatures_and_other_versions_ignored(self) -> None:
        self.assertTrue(verify_standard_signature(BODY, {**HEADERS, "webhook-signature": f"v2,xyz {OTHER} {SIGNATURE}"}, SECRET, now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, {**HEADERS, "webhook-signature": OTHER}, SECRET, now=TIMESTAMP))

    def test_refuses_changes_another_secret_an_old_timestamp_and_missing_headers(self) -> None:
        self.assertFalse(verify_standard_signature(b'{"test": 2432232315}', HEADERS, SECRET, now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, {**HEADERS, "webhook-id": "msg_other"}, SECRET, now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, {**HEADERS, "webhook-timestamp": str(TIMESTAMP + 1)}, SECRET, now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, HEADERS, "whsec_c2VjcmV0LW90aGVy", now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, HEADERS, SECRET, now=TIMESTAMP + 301))
        self.assertTrue(verify_standard_signature(BODY, HEADERS, SECRET, tolerance=400, now=TIMESTAMP + 301))
        self.assertFalse(verify_standard_signature(BODY, {"webhook-id": ID, "webhook-timestamp": str(TIMESTAMP)}, SECRET, now=TIMESTAMP))
        self.assertFalse(verify_standard_signature(BODY, HEADERS, "whsec_!!", now=TIMESTAMP))

    def test_construct_event_takes_the_seed_header_or_the_standard_headers(self) -> None:
        seed = f"t={TIMESTAMP},v1=" + hmac.new(SECRET.encode(), f"{TIMESTAMP}.".encode() + BODY, hashlib.sha256).hexdigest()
        self.assertEqual(construct_event(BODY, HEADERS, SECRET, now=TIMESTAMP), {"test": 2432232314})
        self.assertEqual(construct_event(BODY, {"X-Service-Signature": seed}, SECRET, now=TIMESTAMP), {"test": 2432232314})
        self.assertEqual(construct_event(BODY, seed, SECRET, now=TIMESTAMP), {"test": 2432232314})
        with self.assertRaises(PressroomSignatureError):
            construct_event(BODY, {**HEADERS, "webhook-signature": OTHER}, SECRET, now=TIMESTAMP)
        with self.assertRaises(PressroomSignatureError):
            construct_event(BODY, {}, SECRET, now=TIMESTAMP)


if __name__ == "__main__":
    unittest.main()
