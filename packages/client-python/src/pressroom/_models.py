"""The JSON answers of the API as dicts whose keys also read as attributes.

Every answer keeps all the fields the server sent (``result["url"]`` and
``result.url`` are the same value), so a field added by a newer server is
readable before this package names it. The classes below name the fields of
the documented answers for type checkers; a named field the answer lacks reads
as None. Reprs hide the ``sig`` of signed output URLs and API keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional, TypedDict

_SIGNED_QUERY = re.compile(r"([?&]sig=)[^&#\s'\"]+")
_API_KEY = re.compile(r"\b(pr_[a-z]+_)[A-Za-z0-9_]+")


def redact(text: str) -> str:
    """Hides URL signatures (``sig=…``) and API keys (``pr_live_…``) in text meant for logs."""
    return _API_KEY.sub(r"\1[redacted]", _SIGNED_QUERY.sub(r"\1[redacted]", text))


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return ApiObject(value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


class ApiObject(dict[str, Any]):
    """A JSON object of the API. Nested objects are ApiObjects too."""

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__((key, _wrap(value)) for key, value in fields.items())

    @classmethod
    def _named_fields(cls) -> set[str]:
        names: set[str] = set()
        for klass in cls.__mro__:
            names.update(getattr(klass, "__annotations__", {}))
        return names

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self:
            return self[name]
        if name in self._named_fields():
            return None
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact(dict.__repr__(self))})"


class RenderResult(ApiObject):
    """Answer of ``render`` and ``image``: the finished output (status ``succeeded``),
    or ``queued`` (always with ``webhook_url``, or when the service's wait ran out:
    poll ``job(id)``), when the output fields are None."""

    id: str
    status: str
    url: Optional[str]
    """Signed, expiring download URL: anyone holding it can download the output."""
    expires_at: Optional[str]
    content_type: Optional[str]
    size_bytes: Optional[int]
    content: Optional[bytes]
    """With ``as_bytes=True``: the document itself, from the same request (the same bytes ``url`` serves)."""


class Template(ApiObject):
    """A template: the public catalog's, or this key's own."""

    id: str
    version: Optional[int]
    name: str
    description: str
    output: str
    """``pdf`` or ``png``."""
    page: Optional[ApiObject]
    """PDF templates: format, landscape, margin, header, footer."""
    width: Optional[int]
    height: Optional[int]
    device_scale_factor: Optional[int]
    """PNG templates: device pixels per pixel (1 or 2); at 2 the image is twice ``width`` by twice ``height``."""
    data_schema: Any
    """The JSON Schema that ``data`` must satisfy."""
    sample_data: Any
    preview_url: Optional[str]
    visibility: Optional[str]
    """``public`` (the catalog's) or ``private`` (this key's own)."""
    html: Optional[str]
    """This key's own template, read by ``template(id)``: the version's Handlebars source."""
    asset_names: Optional[list[str]]
    """With ``html``: the names of the version's assets."""
    assets: Optional[list[ApiObject]]
    """With ``html``: the version's assets by name, each ``name`` and ``size_bytes``; ``template_asset`` reads one."""
    options: Optional[ApiObject]
    """With ``html``: the version's default options (``{}`` when none), which a render's or image's own ``options`` override field by field."""


class TemplateVersion(ApiObject):
    """One version of a template: ``version`` and when it was made."""

    version: int
    created_at: str


class TemplateList(ApiObject):
    """Answer of ``templates``: ``templates``, the catalog's and this key's own."""

    templates: list[Template]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["templates"] = [Template(entry) for entry in fields["templates"]]


class TemplateVersionList(ApiObject):
    """Answer of ``template_versions``: ``versions``, newest first."""

    versions: list[TemplateVersion]

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self["versions"] = [TemplateVersion(entry) for entry in fields["versions"]]


class WebhookSecret(ApiObject):
    """Answer of ``webhook_secret``: the ``secret`` (``whsec_…``) that signs this key's callbacks."""

    secret: str


class Usage(ApiObject):
    """The calling key's standing in the current period."""

    plan: str
    period: ApiObject
    """``start``, ``end``."""
    renders: ApiObject
    """``used``, ``limit``, ``remaining``."""
    previews: ApiObject
    """Template previews rendered this month (saves, a preview.png not yet stored): ``used``, ``limit``, ``remaining``."""
    test: ApiObject
    """Test-mode renders and images made this UTC day, against the plan's daily allowance: ``used``, ``limit``, ``remaining``."""
    rate_limit: ApiObject
    """``limit``, ``remaining``, ``reset_seconds``, ``window_seconds``."""
    concurrency: ApiObject
    """``limit``, ``in_flight``."""


class _DestinationUrl(TypedDict):
    url: str


class Destination(_DestinationUrl, total=False):
    """A request's ``destination``: ``url`` (a URL signed in advance for a PUT: S3, R2 or GCS presigned,
    Azure Blob SAS; https, default port, at most 8,192 characters) and the ``headers`` its signature
    needs (at most 20). The output is PUT there before the job succeeds; neither is ever shown or logged."""

    headers: Mapping[str, str]


class Job(ApiObject):
    """One of the caller's jobs: status, result, error, webhook state, event history."""

    id: str
    status: str
    """``queued``, ``rendering``, ``succeeded`` or ``failed``."""
    kind: str
    template_id: Optional[str]
    template_version: Optional[int]
    """The template version the job renders."""
    test: Optional[bool]
    """``True`` on a test-mode job (stamped TEST, counted against the daily test allowance); absent otherwise."""
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]
    output_id: Optional[str]
    """The output's id once succeeded, for ``delete_output``; it stays after the output is gone."""
    url: Optional[str]
    """A download URL signed for this answer while the output lives; None before success and once the output expired or was deleted."""
    expires_at: Optional[str]
    content_type: Optional[str]
    size_bytes: Optional[int]
    error: Optional[ApiObject]
    """``code``, ``message``."""
    destination: Optional[ApiObject]
    """The request's destination: ``host`` (never its path, query or headers), ``state`` (pending, delivered,
    exhausted), ``attempts``, ``last_status``, ``last_error``, ``next_attempt_at``; None without one."""
    webhook: Optional[ApiObject]
    """``state``, ``attempts``, ``last_status`` (0 when no response came), ``last_error`` (why the last
    attempt failed: TLS, DNS, a refused address or connection, a timeout, an HTTP status; None once
    delivered), ``next_attempt_at``."""
    events: list[ApiObject]
    """``id``, ``type``, ``time``, ``source`` of each event, in order (a job.destination_attempted's ``destination``:
    ``attempt``, ``status``, ``duration_ms``, ``host``, ``error``, ``next_attempt_at``)."""


class RotatedWebhookSecret(ApiObject):
    """Answer of ``rotate_webhook_secret``: the new secret; the replaced one also signs callbacks until ``previous_secret_expires_at``
    (and so does each secret replaced before it, until 24 h after its own rotation)."""

    secret: str
    previous_secret_expires_at: str


class CheckoutSession(ApiObject):
    """Answer of ``checkout``: send the user to ``checkout_url``."""

    checkout_url: str
    session_id: str
    plan: str


class RotatedKey(ApiObject):
    """Answer of ``rotate_key``: the key's new value (same account), shown only this once."""

    api_key: str
    previous_key_expires_at: str
    """Until when the replaced key still works (24 h after the rotation); refused after."""


class SignupResult(ApiObject):
    """Answer of ``Pressroom.signup``: the new key, shown only this once."""

    api_key: str
    plan: str
