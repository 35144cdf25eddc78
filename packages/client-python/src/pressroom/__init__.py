"""The official Python client of Pressroom: the HTTP API and the webhook signature check.

Standard library only; Python 3.9 or later.
"""

from ._batches import Batch, BatchItem, BatchItemPage
from ._client import Pressroom
from ._errors import PressroomError
from ._http import DEFAULT_BASE_URL, DEFAULT_TIMEOUT, __version__
from ._lists import Delivery, DeliveryPage, JobPage, UsageDay
from ._models import ApiObject, CheckoutSession, Job, RenderResult, SignupResult, Template, TemplateVersion, Usage
from ._webhooks import DEFAULT_TOLERANCE, SIGNATURE_HEADER, verify_signature

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOLERANCE",
    "SIGNATURE_HEADER",
    "ApiObject",
    "Batch",
    "BatchItem",
    "BatchItemPage",
    "CheckoutSession",
    "Delivery",
    "DeliveryPage",
    "Job",
    "JobPage",
    "Pressroom",
    "PressroomError",
    "RenderResult",
    "SignupResult",
    "Template",
    "TemplateVersion",
    "Usage",
    "UsageDay",
    "__version__",
    "verify_signature",
]
