"""The lists of the caller's account (GET /v1/jobs, /v1/keys/usage/daily, /v1/webhooks/deliveries) and a delivery's replay."""

from __future__ import annotations

import urllib.parse
from typing import Any, Optional

from ._models import ApiObject, Job


class JobPage(ApiObject):
    """A page of ``jobs``: newest first; pass ``next_cursor`` back as ``cursor`` for the next page (None on the last)."""

    data: list[Job]
    next_cursor: Optional[str]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["data"] = [Job(job) for job in fields["data"]]


class UsageDay(ApiObject):
    """The caller's jobs that ended on one UTC day: ``succeeded``, ``failed``, and of the failed those ``refunded``."""

    date: str
    succeeded: int
    failed: int
    refunded: int


class DailyUsage(ApiObject):
    """Answer of ``daily_usage``: ``data``, one ``UsageDay`` per UTC day."""

    data: list[UsageDay]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["data"] = [UsageDay(day) for day in fields["data"]]


class Delivery(ApiObject):
    """One attempt (or a pending one) of a job's webhook callback; the webhook URL itself is never shown."""

    id: str
    event_id: str
    """The callback's id (the body's ``id``): the same on every attempt and replay."""
    event_type: str
    job_id: str
    attempt: int
    status: str
    """``pending``, ``succeeded`` or ``failed``."""
    response_status: Optional[int]
    duration_ms: Optional[int]
    created_at: str
    next_retry_at: Optional[str]


class DeliveryPage(ApiObject):
    """A page of ``webhook_deliveries``, newest first, with ``next_cursor``."""

    data: list[Delivery]
    next_cursor: Optional[str]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["data"] = [Delivery(delivery) for delivery in fields["data"]]


def query(**params: Any) -> str:
    """A query string of the parameters given ("" when none is)."""
    given = [(name, str(value)) for name, value in params.items() if value is not None and value != ""]
    return f"?{urllib.parse.urlencode(given)}" if given else ""
