"""One HTTP exchange with the service (urllib), its errors, and opt-in retries."""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any, Callable, Optional, TypeVar

from ._errors import PressroomError
from ._models import redact

__version__ = "0.1.0"
USER_AGENT = f"pressroom-python/{__version__}"
DEFAULT_BASE_URL = "http://localhost:8080"
# Above the gateway's synchronous wait (60 s), so a slow sync render still answers.
DEFAULT_TIMEOUT = 90.0
DEFAULT_MAX_RETRY_WAIT = 60.0
# Exponential backoff between retries without Retry-After: 0.5 s, 1 s, 2 s, … at most 8 s, jittered.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0

_NO_BODY_HINT = "Check base_url (a proxy may have answered); retry with exponential backoff."

T = TypeVar("T")

# The wait between attempts; tests replace it to record the waits instead of sleeping.
_sleep: Callable[[float], None] = time.sleep


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one would send the key to wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def normalize_base_url(value: str) -> str:
    if not isinstance(value, str):
        raise TypeError("Pressroom: base_url must be a string")
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("Pressroom: base_url must be an absolute http(s) URL")
    if parts.query or parts.fragment:
        raise ValueError("Pressroom: base_url must not have a query or fragment")
    return value.rstrip("/")


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[int]:
    """Seconds from a Retry-After header: delta-seconds or an HTTP-date."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    try:
        date = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if date is None or date.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0, math.ceil(date.timestamp() - current))


def origin_of(url: str) -> str:
    """Scheme, host and port only: output URLs carry a signature that must stay out of messages."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.scheme and parts.netloc else "the server"


def error_from_response(status: int, retry_after_header: Optional[str], text: str) -> PressroomError:
    """The error of a non-2xx answer, from its ``{"error","code","hint"}`` body and ``Retry-After``."""
    retry_after = parse_retry_after(retry_after_header)
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if (
        isinstance(body, dict)
        and isinstance(body.get("error"), str)
        and isinstance(body.get("code"), str)
        and isinstance(body.get("hint", ""), str)
    ):
        return PressroomError(body["code"], status, body["error"], body.get("hint", ""), retry_after)
    return PressroomError(
        "INTERNAL_ERROR",
        status,
        f"unexpected HTTP {status} answer without a Pressroom error body",
        _NO_BODY_HINT,
        retry_after,
    )


def _call_request(
    accept: str, api_key: Optional[str], body: Optional[Mapping[str, Any]], idempotency_key: Optional[str], wait_for_slot: Optional[int] = None
) -> tuple[dict[str, str], Optional[bytes]]:
    """The headers and JSON body of one API call: what it accepts, its key, Idempotency-Key and Prefer: wait=N."""
    headers = {"Accept": accept, "User-Agent": USER_AGENT}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    if wait_for_slot is not None:
        headers["Prefer"] = f"wait={wait_for_slot}"
    if body is None:
        return headers, None
    headers["Content-Type"] = "application/json"
    return headers, json.dumps(body, separators=(",", ":")).encode("utf-8")


class Transport:
    """Where and how requests go: base URL, per-operation socket timeout, retry policy."""

    def __init__(
        self,
        base_url: Optional[str],
        timeout: float,
        max_retries: int = 0,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError("Pressroom: timeout must be a positive number of seconds")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("Pressroom: max_retries must be a whole number >= 0")
        if isinstance(max_retry_wait, bool) or not isinstance(max_retry_wait, (int, float)) or not max_retry_wait >= 0:
            raise ValueError("Pressroom: max_retry_wait must be a number of seconds >= 0")
        self.base_url = normalize_base_url(base_url if base_url is not None else DEFAULT_BASE_URL)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_retry_wait = float(max_retry_wait)
        self._opener = urllib.request.build_opener(_NoRedirects)

    def _exchange(self, method: str, url: str, headers: dict[str, str], body: Optional[bytes]) -> tuple[int, bytes, Message]:
        """One request: the status, body and headers of a 2xx answer; PressroomError for anything else."""
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return response.status, response.read(), response.headers
            except urllib.error.HTTPError as answer:
                with answer:
                    text = answer.read().decode("utf-8", "replace")
                raise error_from_response(answer.code, answer.headers.get("Retry-After"), text) from None
        # No exception chaining: the causes' messages can hold the URL, and so its signature.
        except (socket.timeout, TimeoutError):
            raise self._timeout(url) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, (socket.timeout, TimeoutError)):
                raise self._timeout(url) from None
            raise self._unreachable(url, err.reason) from None
        except (OSError, http.client.HTTPException) as err:
            raise self._unreachable(url, err) from None

    def _timeout(self, url: str) -> PressroomError:
        return PressroomError(
            "TIMEOUT",
            0,
            f"no answer from {origin_of(url)} within {self.timeout:g} s",
            "Retry later, raise timeout, or send webhook_url to render asynchronously.",
        )

    def _unreachable(self, url: str, reason: object) -> PressroomError:
        return PressroomError(
            "CONNECTION_ERROR",
            0,
            f"could not reach {origin_of(url)}: {redact(str(reason))}",
            "Check base_url and the network; retry with exponential backoff.",
        )

    def _retry_wait(self, error: PressroomError, retries_done: int) -> Optional[float]:
        """Seconds to wait before retrying after ``error``, or None to give up.

        429 and 5xx answers are retried, up to ``max_retries`` times. A
        Retry-After is honoured as it is; one longer than ``max_retry_wait``
        (a monthly quota, a signup throttle) is not waited for at all.
        """
        if retries_done >= self.max_retries or not (error.status == 429 or error.status >= 500):
            return None
        if error.retry_after is not None:
            return float(error.retry_after) if error.retry_after <= self.max_retry_wait else None
        ceiling = min(BACKOFF_CAP, BACKOFF_BASE * 2.0**retries_done, self.max_retry_wait)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _with_retries(self, attempt: Callable[[], T]) -> T:
        retries_done = 0
        while True:
            try:
                return attempt()
            except PressroomError as error:
                wait = self._retry_wait(error, retries_done)
                if wait is None:
                    raise
                _sleep(wait)
            retries_done += 1

    def request_json(
        self,
        method: str,
        path: str,
        api_key: Optional[str] = None,
        body: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
        wait_for_slot: Optional[int] = None,
    ) -> Any:
        """One JSON call of the API. No ``api_key`` means no Authorization header."""
        url = f"{self.base_url}{path}"
        headers, data = _call_request("application/json", api_key, body, idempotency_key, wait_for_slot)

        def attempt() -> Any:
            status, raw, _ = self._exchange(method, url, headers, data)
            if status == 204:
                return None
            try:
                return json.loads(raw.decode("utf-8"))
            except ValueError:
                raise PressroomError("INTERNAL_ERROR", status, f"HTTP {status} answer is not JSON", _NO_BODY_HINT) from None

        return self._with_retries(attempt)

    def request_document(
        self,
        path: str,
        document_type: str,
        api_key: str,
        body: Mapping[str, Any],
        idempotency_key: Optional[str] = None,
        wait_for_slot: Optional[int] = None,
    ) -> tuple[Any, Optional[bytes]]:
        """A sync render asking for the document itself (``Accept: document_type``).

        Returns the answer's fields and the document's bytes; for a JSON answer
        (a job still running: 202) its fields and None. The document's fields
        come from the headers that stand for the JSON.
        """
        url = f"{self.base_url}{path}"
        headers, data = _call_request(document_type, api_key, body, idempotency_key, wait_for_slot)

        def attempt() -> tuple[Any, Optional[bytes]]:
            status, raw, answer = self._exchange("POST", url, headers, data)
            if answer.get_content_type() == document_type:
                fields = {
                    "id": answer.get("Pressroom-Job-Id"),
                    "status": "succeeded",
                    "url": answer.get("Content-Location"),
                    "expires_at": answer.get("Pressroom-Expires-At"),
                    "content_type": document_type,
                    "size_bytes": len(raw),
                }
                return fields, raw
            try:
                return json.loads(raw.decode("utf-8")), None
            except ValueError:
                raise PressroomError("INTERNAL_ERROR", status, f"HTTP {status} answer is neither {document_type} nor JSON", _NO_BODY_HINT) from None

        return self._with_retries(attempt)

    def request_image(self, method: str, path: str, api_key: str, body: Optional[Mapping[str, Any]] = None) -> bytes:
        """One call of the API answered with a PNG (a preview): its bytes; an error answer raises as any call's."""
        headers, data = _call_request("image/png", api_key, body, None)
        return self._with_retries(lambda: self._exchange(method, f"{self.base_url}{path}", headers, data)[1])

    def request_bytes(self, url: str, api_key: Optional[str] = None) -> bytes:
        """A GET answered with bytes: a signed output URL without Authorization (the URL is its own credential), or an API URL with the key (a template's preview or asset)."""
        headers = {"Accept": "*/*", "User-Agent": USER_AGENT}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key}"
        return self._with_retries(lambda: self._exchange("GET", url, headers, None)[1])
