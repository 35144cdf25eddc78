"""The official Python client of Pressroom: the HTTP API and the webhook signature check.

Standard library only; Python 3.9 or later.
"""

from ._batches import Batch, BatchCompletedEvent, BatchItem, BatchItemPage
from ._client import Pressroom
from ._errors import PressroomError, PressroomSignatureError
from ._http import DEFAULT_BASE_URL, DEFAULT_TIMEOUT, __version__
from ._lists import DailyUsage, Delivery, DeliveryPage, JobPage, UsageDay
from ._models import (
    ApiObject,
    CheckoutSession,
    Destination,
    Job,
    RenderResult,
    RotatedKey,
    RotatedWebhookSecret,
    SignupResult,
    Template,
    TemplateList,
    TemplateVersion,
    TemplateVersionList,
    Usage,
    WebhookSecret,
)
from ._webhooks import DEFAULT_TOLERANCE, SIGNATURE_HEADER, construct_event, verify_signature, verify_standard_signature

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOLERANCE",
    "SIGNATURE_HEADER",
    "ApiObject",
    "Destination",
    "Batch",
    "BatchCompletedEvent",
    "BatchItem",
    "BatchItemPage",
    "CheckoutSession",
    "DailyUsage",
    "Delivery",
    "DeliveryPage",
    "Job",
    "JobPage",
    "Pressroom",
    "PressroomError",
    "PressroomSignatureError",
    "RenderResult",
    "RotatedKey",
    "RotatedWebhookSecret",
    "SignupResult",
    "Template",
    "TemplateList",
    "TemplateVersion",
    "TemplateVersionList",
    "Usage",
    "UsageDay",
    "WebhookSecret",
    "__version__",
    "construct_event",
    "verify_signature",
    "verify_standard_signature",
]
