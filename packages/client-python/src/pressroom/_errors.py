from __future__ import annotations

from typing import Any, Optional


class PressroomError(Exception):
    """A non-2xx answer of the Pressroom API, or a request that got no answer.

    ``code``, ``message`` and ``hint`` come from the API's
    ``{"error","code","hint"}`` body: branch on ``code``, never on the message.
    ``status`` is the HTTP status and ``retry_after`` the ``Retry-After``
    header in seconds (set on every 429), or None. Network failures and
    timeouts have status 0 and code ``CONNECTION_ERROR`` or ``TIMEOUT``.
    Messages never contain the signed part of an output URL.
    """

    def __init__(self, code: str, status: int, message: str, hint: str = "", retry_after: Optional[int] = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.hint = hint
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"PressroomError(code={self.code!r}, status={self.status!r}, message={self.message!r}, "
            f"hint={self.hint!r}, retry_after={self.retry_after!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (PressroomError, (self.code, self.status, self.message, self.hint, self.retry_after))


class PressroomSignatureError(Exception):
    """Raised by ``construct_event`` when a webhook delivery's signature is missing,
    malformed, outside the tolerance, or does not match the body. Answer the
    delivery with 400 (or 401) and do not act on the body."""

    code = "SIGNATURE_INVALID"

    def __init__(self, message: str = "webhook signature verification failed") -> None:
        super().__init__(message)
