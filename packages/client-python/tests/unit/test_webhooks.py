from __future__ import annotations

import hashlib
import hmac
import json
import time
import unittest
from unittest import mock

from support import VECTORS

from pressroom import DEFAULT_TOLERANCE, SIGNATURE_HEADER, verify_signature

SECRET = "whsec_test_3f9c2a7d1e5b4c8a"
NOW = 1767225600
BODY = b'{"id":"evt_01","type":"job.succeeded","job_id":"job_01","status":"succeeded"}'


def sign(t: int, body: bytes = BODY, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


class SharedVectors(unittest.TestCase):
    """The vectors the JavaScript client's verifier is tested with too."""

    def test_every_vector(self) -> None:
        vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
        self.assertGreaterEqual(sum(1 for v in vectors if v["valid"]), 10)
        self.assertGreaterEqual(sum(1 for v in vectors if not v["valid"]), 30)
        for vector in vectors:
            with self.subTest(vector["name"]):
                payload = bytes.fromhex(vector["payload_hex"]) if "payload_hex" in vector else vector["payload"]
                tolerance = vector.get("tolerance", DEFAULT_TOLERANCE)
                self.assertIs(verify_signature(payload, vector["header"], vector["secret"], tolerance, now=vector["now"]), vector["valid"])


class Verify(unittest.TestCase):
    def test_defaults_to_the_current_time_and_a_tolerance_of_300_s(self) -> None:
        self.assertEqual(DEFAULT_TOLERANCE, 300)
        self.assertEqual(SIGNATURE_HEADER, "X-Service-Signature")
        t = int(time.time())
        self.assertTrue(verify_signature(BODY, f"t={t},v1={sign(t)}", SECRET))
        self.assertFalse(verify_signature(BODY, f"t={t - 3600},v1={sign(t - 3600)}", SECRET))

    def test_accepts_str_bytes_bytearray_and_memoryview_bodies(self) -> None:
        header = f"t={NOW},v1={sign(NOW)}"
        for payload in (BODY, BODY.decode(), bytearray(BODY), memoryview(BODY)):
            with self.subTest(type(payload).__name__):
                self.assertTrue(verify_signature(payload, header, SECRET, now=NOW))

    def test_tolerance_is_a_keyword_too(self) -> None:
        header = f"t={NOW - 500},v1={sign(NOW - 500)}"
        self.assertFalse(verify_signature(BODY, header, SECRET, now=NOW))
        self.assertTrue(verify_signature(BODY, header, SECRET, tolerance=600, now=NOW))

    def test_never_raises_whatever_it_is_given(self) -> None:
        header = f"t={NOW},v1={sign(NOW)}"
        cases = {
            "a parsed body instead of the raw one": (json.loads(BODY), header, SECRET, 300, NOW),
            "no body": (None, header, SECRET, 300, NOW),
            "no header": (BODY, None, SECRET, 300, NOW),
            "a header that is not text": (BODY, 42, SECRET, 300, NOW),
            "a list of headers": (BODY, [header], SECRET, 300, NOW),
            "no secret": (BODY, header, None, 300, NOW),
            "an empty secret": (BODY, header, "", 300, NOW),
            "a negative tolerance": (BODY, header, SECRET, -1, NOW),
            "a NaN tolerance": (BODY, header, SECRET, float("nan"), NOW),
            "an infinite tolerance": (BODY, header, SECRET, float("inf"), NOW),
            "a tolerance that is not a number": (BODY, header, SECRET, "300", NOW),
            "a NaN clock": (BODY, header, SECRET, 300, float("nan")),
            "a clock that is not a number": (BODY, header, SECRET, 300, "now"),
            "text that cannot be UTF-8": ("\ud800", header, SECRET, 300, NOW),
        }
        for name, (payload, hdr, secret, tolerance, now) in cases.items():
            with self.subTest(name):
                self.assertIs(verify_signature(payload, hdr, secret, tolerance, now), False)  # type: ignore[arg-type]

    def test_compares_every_v1_with_hmac_compare_digest(self) -> None:
        wrong = sign(NOW, secret="whsec_other")
        with mock.patch("pressroom._webhooks.hmac.compare_digest", wraps=hmac.compare_digest) as compare:
            self.assertTrue(verify_signature(BODY, f"t={NOW},v1={sign(NOW)},v1={wrong}", SECRET, now=NOW))
            self.assertEqual(compare.call_count, 2, "no early exit on the first match")
            for call in compare.call_args_list:
                self.assertEqual([len(arg) for arg in call.args], [32, 32])
            self.assertFalse(verify_signature(BODY, f"t={NOW},v1={wrong}", SECRET, now=NOW))
            self.assertEqual(compare.call_count, 3)


if __name__ == "__main__":
    unittest.main()
