"""Webhook signatures (spec section 6).

    X-Service-Signature: t=<unix-seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>

and, beside it, the Standard Webhooks headers (``webhook-id``,
``webhook-timestamp``, ``webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + t + "." + body)>``
keyed with the base64 after ``whsec_``, decoded).

The same procedure as the JavaScript client's ``verifyWebhookSignature``; both
are checked against one set of test vectors (``test/vectors/webhook-signatures.json``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import time
from collections.abc import Mapping
from typing import Any, Optional, Union

from ._errors import PressroomSignatureError

SIGNATURE_HEADER = "X-Service-Signature"
"""The header that carries the signature (HTTP header names are case-insensitive)."""

DEFAULT_TOLERANCE = 300
"""Default replay window: ``abs(now - t)`` may be at most this many seconds."""

_HEX_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_BASE64_SHA256 = re.compile(r"[A-Za-z0-9+/]{43}=")
_UNSIGNED_INTEGER = re.compile(r"[0-9]+")
# The JavaScript verifier reads t as a double: beyond 2**53 - 1 both refuse it.
_MAX_SAFE_INTEGER = 2**53 - 1

Payload = Union[bytes, bytearray, memoryview, str]


def _parse_header(header: str) -> Optional[tuple[str, int, list[bytes]]]:
    """Parses ``t=<int>,v1=<hex>[,v1=<hex>...][,<other scheme>=...]``.

    Returns (t as written, t as an integer, the decoded v1 signatures), or None
    for anything malformed: no or duplicate ``t``, a non-integer ``t``, no
    ``v1``, a ``v1`` that is not 64 hex digits, or an entry that is not
    ``key=value``. Entries of other schemes (v0, v2, ...) are ignored whatever
    their value. Spaces and tabs around an entry are allowed.
    """
    if not header:
        return None
    timestamp: Optional[str] = None
    signatures: list[bytes] = []
    for raw_entry in header.split(","):
        entry = raw_entry.strip(" \t")
        key, sep, value = entry.partition("=")
        if not sep or not key:
            return None
        if key == "t":
            if timestamp is not None:
                return None
            timestamp = value
        elif key == "v1":
            if not _HEX_SHA256.fullmatch(value):
                return None
            signatures.append(bytes.fromhex(value))
    if timestamp is None or not _UNSIGNED_INTEGER.fullmatch(timestamp) or not signatures:
        return None
    seconds = int(timestamp)
    if seconds > _MAX_SAFE_INTEGER:
        return None
    return timestamp, seconds, signatures


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def verify_signature(
    payload: Payload,
    header: Optional[str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> bool:
    """Checks a webhook delivery's ``X-Service-Signature`` header.

    True only when the header is well formed, its ``t`` lies within
    ``tolerance`` seconds of ``now`` (Unix seconds, default the current time),
    in the past or the future, and at least one ``v1`` equals
    HMAC-SHA256(secret, t + "." + payload), compared with
    ``hmac.compare_digest``. Several ``v1`` values appear while a secret is
    rotated: any match is enough.

    Pass ``payload`` exactly as received (bytes, or text that is encoded as
    UTF-8), before any JSON parsing. Never raises: a tampered, expired or
    malformed signature, and any argument of the wrong kind, give False.
    """
    try:
        if isinstance(payload, str):
            body = payload.encode("utf-8")
        elif isinstance(payload, (bytes, bytearray, memoryview)):
            body = bytes(payload)
        else:
            return False
        if not isinstance(header, str) or not isinstance(secret, str) or not secret:
            return False
        if not _is_number(tolerance) or tolerance < 0:
            return False
        parsed = _parse_header(header)
        if parsed is None:
            return False
        timestamp, seconds, candidates = parsed
        current = time.time() if now is None else now
        if not _is_number(current):
            return False
        if abs(math.floor(current) - seconds) > tolerance:
            return False
        expected = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256).digest()
        matched = False
        # Every candidate is compared (no early exit), each in constant time.
        for candidate in candidates:
            if hmac.compare_digest(candidate, expected):
                matched = True
        return matched
    except Exception:
        return False


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    """A header's value from any mapping of headers (names in any case; a list's first value)."""
    getter = getattr(headers, "get", None)
    # email.message.Message (http.server's headers) and similar look names up case-insensitively.
    value = getter(name) if getter is not None and not isinstance(headers, dict) else None
    if value is None:
        for key, candidate in headers.items():
            if isinstance(key, str) and key.lower() == name.lower():
                value = candidate
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


def _payload_bytes(payload: Payload) -> Optional[bytes]:
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    return None


def verify_standard_signature(
    payload: Payload,
    headers: Mapping[str, Any],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> bool:
    """Checks a delivery's Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``).

    True only when the timestamp lies within ``tolerance`` seconds of ``now``
    and one ``v1,<base64>`` entry of ``webhook-signature`` matches. Never raises.
    """
    try:
        body = _payload_bytes(payload)
        if body is None or not isinstance(secret, str) or not _is_number(tolerance) or tolerance < 0:
            return False
        event_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        signature = _header(headers, "webhook-signature")
        if not event_id or not timestamp or not signature or not _UNSIGNED_INTEGER.fullmatch(timestamp):
            return False
        current = time.time() if now is None else now
        if not _is_number(current) or abs(math.floor(current) - int(timestamp)) > tolerance:
            return False
        key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
        if not key:
            return False
        expected = hmac.new(key, f"{event_id}.{timestamp}.".encode("utf-8") + body, hashlib.sha256).digest()
        matched = False
        for entry in signature.split(" "):
            version, _, value = entry.partition(",")
            if version == "v1" and _BASE64_SHA256.fullmatch(value) and hmac.compare_digest(base64.b64decode(value), expected):
                matched = True
        return matched
    except (binascii.Error, ValueError, TypeError, AttributeError):
        return False


def construct_event(
    payload: Payload,
    headers: Union[str, Mapping[str, Any], None],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Any:
    """Verifies the delivery, then parses it: the only safe order.

    ``headers`` is the ``X-Service-Signature`` value, or the delivery's headers
    (then its ``X-Service-Signature`` or its Standard Webhooks headers must
    verify). Raises ``PressroomSignatureError`` when verification fails; a
    verified body that is not UTF-8 JSON raises ``ValueError``.
    """
    if headers is None or isinstance(headers, str):
        verified = verify_signature(payload, headers, secret, tolerance, now)
    else:
        verified = verify_signature(payload, _header(headers, SIGNATURE_HEADER), secret, tolerance, now) or verify_standard_signature(
            payload, headers, secret, tolerance, now
        )
    if not verified:
        raise PressroomSignatureError()
    body = _payload_bytes(payload)
    assert body is not None
    return json.loads(body.decode("utf-8"))
