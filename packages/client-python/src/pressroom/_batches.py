"""Batches (POST /v1/batches and its reads): many render and image jobs with one request."""

from __future__ import annotations

from typing import Any, Optional

from ._models import ApiObject


class Batch(ApiObject):
    """A batch: ``status`` accepted, running, completed or cancelled; ``counts`` of its items (queued, running, succeeded, failed).

    ``archive`` (``archive=True`` batches, once the zip of the outputs is ready, else None): ``url`` (signed,
    expiring), ``expires_at``, ``size_bytes``.
    """

    id: str
    status: str
    total: int
    counts: ApiObject
    created_at: str
    archive: Optional[ApiObject]


class BatchCompletedEvent(ApiObject):
    """The body of a batch's callback (``type`` "batch.completed"), verified as a job callback is: ``id``, ``type``, ``created_at``, ``batch``."""

    id: str
    type: str
    created_at: str
    batch: Batch

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["batch"] = Batch(fields["batch"])


class BatchItem(ApiObject):
    """One item of a batch: its job (an ordinary job: ``job(job_id)``), its ``url`` once succeeded, its ``error`` once failed."""

    index: int
    job_id: str
    status: str
    url: Optional[str]
    error: Optional[ApiObject]


class BatchItemPage(ApiObject):
    """A page of ``batch_items`` in item order; pass ``next_cursor`` back as ``cursor`` for the next page (None on the last)."""

    data: list[BatchItem]
    next_cursor: Optional[str]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["data"] = [BatchItem(item) for item in fields["data"]]
