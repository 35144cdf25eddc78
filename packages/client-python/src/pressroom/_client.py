from __future__ import annotations

import base64
import os
import re
import time
import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ._batches import Batch, BatchItemPage
from ._errors import PressroomError
from ._http import DEFAULT_MAX_RETRY_WAIT, DEFAULT_TIMEOUT, Transport
from ._lists import DailyUsage, Delivery, DeliveryPage, JobPage, query
from ._models import (
    Destination,
    CheckoutSession,
    Job,
    RenderResult,
    RotatedKey,
    RotatedWebhookSecret,
    SignupResult,
    Template,
    TemplateList,
    TemplateVersionList,
    Usage,
    WebhookSecret,
)

BASE_URL_VARIABLE = "PRESSROOM_BASE_URL"
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")


def _base_url(base_url: Optional[str]) -> Optional[str]:
    return base_url if base_url is not None else os.environ.get(BASE_URL_VARIABLE) or None


def _fields(**fields: Any) -> dict[str, Any]:
    """The request body: the fields that were given."""
    return {name: value for name, value in fields.items() if value is not None}


def _async(asynchronous: bool) -> dict[str, Any]:
    """The body's ``async`` field: sent only when asked for."""
    return {"async": True} if asynchronous else {}


def _test(test: bool) -> dict[str, Any]:
    """The body's ``test`` field (test mode): sent only when asked for."""
    return {"test": True} if test else {}


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def _template_body(arguments: dict[str, Any]) -> dict[str, Any]:
    """A template's body from a method's arguments: the fields given, its assets in base64."""
    arguments.pop("self", None)
    assets = arguments.pop("assets", None)
    body = _fields(**arguments)
    if assets is not None:
        body["assets"] = {name: base64.b64encode(content).decode("ascii") for name, content in assets.items()}
    return body


class Pressroom:
    """The Pressroom API client.

    ``base_url`` defaults to ``PRESSROOM_BASE_URL`` when set, else
    ``http://localhost:8080``. ``timeout`` (seconds) bounds the connection and
    each wait for data. Every method returns the decoded answer and raises
    ``PressroomError`` for a non-2xx answer, a network failure or a timeout.

    Retries are off by default. With ``max_retries=N``, answers 429 and 5xx are
    retried up to N times, after ``Retry-After`` seconds when the answer has
    one (never longer than ``max_retry_wait``: a longer wait is raised at once)
    and otherwise after a jittered exponential backoff; ``render``, ``image``,
    ``screenshot``, ``checkout`` and ``create_batch`` then send an
    ``Idempotency-Key`` (the same on every retry of one call) so a retried render
    is not run twice.
    """

    def __init__(
        self,
        api_key: str,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = 0,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
    ) -> None:
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("Pressroom: api_key is required (sign up with Pressroom.signup, or use the demo key)")
        self.__api_key = api_key
        self._transport = Transport(_base_url(base_url), timeout, max_retries, max_retry_wait)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def __repr__(self) -> str:
        return f"Pressroom(base_url={self.base_url!r})"

    @staticmethod
    def signup(email: str, base_url: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> SignupResult:
        """POST /v1/signup (no key needed): a new free-plan key, shown only this once."""
        transport = Transport(_base_url(base_url), timeout)
        return SignupResult(transport.request_json("POST", "/v1/signup", body={"email": email}))

    def _call(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, idempotency_key: Optional[str] = None) -> Any:
        return self._transport.request_json(method, path, api_key=self.__api_key, body=body, idempotency_key=idempotency_key)

    def _idempotency_key(self, given: Optional[str]) -> Optional[str]:
        if given is not None:
            if not isinstance(given, str) or not _IDEMPOTENCY_KEY.fullmatch(given):
                raise ValueError("Pressroom: idempotency_key must be 1 to 255 visible ASCII characters")
            return given
        return str(uuid.uuid4()) if self._transport.max_retries > 0 else None

    def render(
        self,
        *,
        data: Mapping[str, Any],
        template_id: Optional[str] = None,
        template_version: Optional[int] = None,
        html: Optional[str] = None,
        url: Optional[str] = None,
        url_options: Optional[Mapping[str, Any]] = None,
        documents: Optional[Sequence[Mapping[str, Any]]] = None,
        options: Optional[Mapping[str, Any]] = None,
        webhook_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        as_bytes: bool = False,
        asynchronous: bool = False,
        wait_for_slot: Optional[int] = None,
        destination: Optional[Destination] = None,
        test: bool = False,
    ) -> RenderResult:
        """POST /v1/render: a PDF from ``template_id``, raw ``html`` or a public page (``url``) filled with ``data``.

        Or a merged PDF from ``documents`` (with ``data={}``): 1 to 20 parts, each a dict with
        one of ``template_id``, ``html`` or ``url`` and its own ``data`` and ``options``,
        rendered in order into one PDF, one quota unit each.

        ``options`` is the API's options object, e.g. ``{"format": "A5",
        "margin": {"top": "20mm"}, "footer_html": "<span class='pageNumber'></span>",
        "wait_for": {"selector": "#ready"}, "filename": "invoice.pdf",
        "output_ttl_seconds": 3600}``; it overrides the template's page settings
        (see the OpenAPI document). ``output_ttl_seconds`` (60 to the plan's maximum:
        a day on Demo and Free, 3 days on Starter, 7 on Pro and Business) sets how long
        the output and its URL live; ``delete_output`` removes it sooner.

        ``url_options`` (with ``url``, or in a ``documents`` part with its ``url``) is how
        the page is asked for: ``{"headers": {...}, "cookies": [{"name", "value", "path"?}],
        "basic_auth": {"username", "password"}, "user_agent"}``, sent only to the url's own
        origin, never to another one (not even across a redirect), never logged.

        ``template_version`` pins a version of the template; without it, its
        current version when the request is admitted.

        Without ``webhook_url`` the answer is the finished output (or ``queued``
        when the service's wait ran out: poll ``job(id)``); with it, always
        ``queued``, and the result arrives by signed callback. With
        ``as_bytes=True`` (no ``webhook_url``) the PDF itself comes back in the
        same request, as ``result.content``. With ``asynchronous=True`` (the body's
        ``"async": true``) the answer is ``queued`` at once: ``wait_for_job(id)``
        waits for the end. ``wait_for_slot`` (1 to 60 seconds) sends ``Prefer: wait=N``:
        a render over the key's concurrency limit waits that long for a slot
        before ``CONCURRENCY_EXCEEDED``.

        ``destination`` (``{"url": <presigned PUT URL>, "headers": {...}}``) also
        delivers the output there by HTTP PUT; the job succeeds only once the
        destination answered 2xx (``DESTINATION_FAILED``, 502, when it never
        does). The job shows its host only.

        ``test=True`` (test mode) stamps the
        document TEST on every page and counts it against the key's daily test
        allowance (``usage().test``), never the monthly renders; past it,
        ``QUOTA_EXCEEDED`` until 00:00 UTC.
        """
        body = _fields(
            template_id=template_id,
            template_version=template_version,
            html=html,
            url=url,
            url_options=url_options,
            documents=None if documents is None else [dict(part) for part in documents],
            data=data,
            options=options,
            webhook_url=webhook_url,
            destination=None if destination is None else dict(destination),
            **_async(asynchronous),
            **_test(test),
        )
        return self._render("/v1/render", "application/pdf", body, idempotency_key, as_bytes, wait_for_slot)

    def image(
        self,
        *,
        data: Mapping[str, Any],
        template_id: Optional[str] = None,
        template_version: Optional[int] = None,
        url: Optional[str] = None,
        url_options: Optional[Mapping[str, Any]] = None,
        options: Optional[Mapping[str, Any]] = None,
        webhook_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        as_bytes: bool = False,
        asynchronous: bool = False,
        wait_for_slot: Optional[int] = None,
        destination: Optional[Destination] = None,
        test: bool = False,
    ) -> RenderResult:
        """POST /v1/image: an image from an image template or a public page (``url``).

        ``options``: ``format`` (png, jpeg, webp), ``quality``, ``omit_background``,
        ``output_ttl_seconds``, and for a url ``width``, ``height`` and ``device_scale_factor``. Same
        answers as ``render``, ``as_bytes``, ``template_version``, ``url_options``, ``destination`` and ``test`` too (the bytes of the
        asked format; a test image is a png stamped TEST across its middle).
        """
        body = _fields(
            template_id=template_id,
            template_version=template_version,
            url=url,
            url_options=url_options,
            data=data,
            options=options,
            webhook_url=webhook_url,
            destination=None if destination is None else dict(destination),
            **_async(asynchronous),
            **_test(test),
        )
        image_type = f"image/{(options or {}).get('format', 'png')}"
        return self._render("/v1/image", image_type, body, idempotency_key, as_bytes, wait_for_slot)

    def screenshot(
        self,
        *,
        html: Optional[str] = None,
        url: Optional[str] = None,
        url_options: Optional[Mapping[str, Any]] = None,
        data: Optional[Mapping[str, Any]] = None,
        options: Optional[Mapping[str, Any]] = None,
        webhook_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        as_bytes: bool = False,
        asynchronous: bool = False,
        wait_for_slot: Optional[int] = None,
        test: bool = False,
    ) -> RenderResult:
        """POST /v1/screenshot: an image of raw ``html`` (filled with ``data``, default ``{}``) or of a public page (``url``).

        ``options``: an image's (``format``, ``quality``, ``omit_background``, ``width``,
        ``height``, ``device_scale_factor``, ``wait_for``, ...) and at most one of
        ``full_page`` (the whole page), ``selector`` (one element) and ``clip``
        (``{"x", "y", "width", "height"}`` in CSS pixels); none: the viewport.
        Same answers as ``image``, ``as_bytes``, ``asynchronous``, ``url_options`` and ``test`` too.
        """
        body = _fields(html=html, url=url, url_options=url_options, data=data, options=options, webhook_url=webhook_url, **_async(asynchronous), **_test(test))
        image_type = f"image/{(options or {}).get('format', 'png')}"
        return self._render("/v1/screenshot", image_type, body, idempotency_key, as_bytes, wait_for_slot)

    def _render(
        self, path: str, document_type: str, body: dict[str, Any], idempotency_key: Optional[str], as_bytes: bool, wait_for_slot: Optional[int]
    ) -> RenderResult:
        key = self._idempotency_key(idempotency_key)
        if wait_for_slot is not None and (isinstance(wait_for_slot, bool) or not isinstance(wait_for_slot, int) or not 1 <= wait_for_slot <= 60):
            raise ValueError("Pressroom: wait_for_slot must be a whole number of seconds from 1 to 60")
        if not as_bytes:
            return RenderResult(self._transport.request_json("POST", path, self.__api_key, body, key, wait_for_slot))
        if "webhook_url" in body:
            raise ValueError("Pressroom: as_bytes needs a synchronous render (no webhook_url)")
        fields, content = self._transport.request_document(path, document_type, self.__api_key, body, key, wait_for_slot)
        result = RenderResult(fields)
        if content is not None:
            result["content"] = content
        elif result.status == "succeeded" and result.url:
            # A service that answers JSON anyway: the document is one more request away.
            result["content"] = self.download(result.url)
        return result

    def templates(self) -> TemplateList:
        """GET /v1/templates: ``templates``, the public catalog's and this key's own (visibility ``private``)."""
        return TemplateList(self._call("GET", "/v1/templates"))

    def create_template(
        self,
        *,
        id: str,
        name: str,
        output: str,
        html: str,
        description: Optional[str] = None,
        data_schema: Optional[Mapping[str, Any]] = None,
        sample_data: Optional[Mapping[str, Any]] = None,
        page: Optional[Mapping[str, Any]] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
        device_scale_factor: Optional[int] = None,
        assets: Optional[Mapping[str, bytes]] = None,
        options: Optional[Mapping[str, Any]] = None,
    ) -> Template:
        """POST /v1/templates: stores a template of this key's account (version 1), once it rendered its sample data.

        ``assets`` are files the html refers to as ``assets/<name>`` (bytes; sent
        as base64). ``options`` are the version's default options: those of ``render``
        (pdf) or of ``image`` without the url's size (png), checked as a request's;
        a request's own ``options`` override them field by field. Raises PressroomError TEMPLATE_EXISTS (409),
        TEMPLATE_LIMIT_REACHED (403), PAYLOAD_INVALID or RENDER_FAILED (422).
        """
        body = _template_body(locals())
        return Template(self._call("POST", "/v1/templates", body))

    def update_template(
        self,
        id: str,
        *,
        name: str,
        output: str,
        html: str,
        description: Optional[str] = None,
        data_schema: Optional[Mapping[str, Any]] = None,
        sample_data: Optional[Mapping[str, Any]] = None,
        page: Optional[Mapping[str, Any]] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
        device_scale_factor: Optional[int] = None,
        assets: Optional[Mapping[str, bytes]] = None,
        options: Optional[Mapping[str, Any]] = None,
    ) -> Template:
        """PUT /v1/templates/<id>: replaces an own template with its next version (same fields as ``create_template``)."""
        fields = locals()
        fields.pop("id")
        return Template(self._call("PUT", f"/v1/templates/{_quote(id)}", _template_body(fields)))

    def template(self, id: str, version: Optional[int] = None) -> Template:
        """GET /v1/templates/<id>: the template's current version, or ``version``."""
        path = f"/v1/templates/{_quote(id)}" + ("" if version is None else f"/versions/{_quote(str(version))}")
        return Template(self._call("GET", path))

    def template_versions(self, id: str) -> TemplateVersionList:
        """GET /v1/templates/<id>/versions: ``versions``, newest first."""
        return TemplateVersionList(self._call("GET", f"/v1/templates/{_quote(id)}/versions"))

    def template_asset(self, id: str, version: int, name: str) -> bytes:
        """GET /v1/templates/<id>/versions/<n>/assets/<name>: the bytes of one asset of a version of this key's own template."""
        path = f"/v1/templates/{_quote(id)}/versions/{_quote(str(version))}/assets/{_quote(name)}"
        return self._transport.request_bytes(f"{self._transport.base_url}{path}", api_key=self.__api_key)

    def template_preview(self, id: str, version: Optional[int] = None) -> bytes:
        """GET /v1/templates/<id>/preview.png, or /versions/<version>/preview.png: the PNG of the current version, or of ``version`` (each keeps its own)."""
        path = f"/v1/templates/{_quote(id)}" + ("" if version is None else f"/versions/{_quote(str(version))}")
        return self._transport.request_image("GET", f"{path}/preview.png", self.__api_key)

    def preview_template(
        self,
        *,
        name: str,
        output: str,
        html: str,
        id: Optional[str] = None,
        description: Optional[str] = None,
        data_schema: Optional[Mapping[str, Any]] = None,
        sample_data: Optional[Mapping[str, Any]] = None,
        page: Optional[Mapping[str, Any]] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
        device_scale_factor: Optional[int] = None,
        assets: Optional[Mapping[str, bytes]] = None,
        options: Optional[Mapping[str, Any]] = None,
    ) -> bytes:
        """POST /v1/templates/preview: the PNG of an unsaved template rendered with its sample data; nothing is stored.

        The fields of ``create_template`` (``id`` optional). Counted as one of the month's
        previews. Raises PressroomError PAYLOAD_INVALID (422; a source that does not compile
        names its line and column) or RENDER_FAILED (422).
        """
        return self._transport.request_image("POST", "/v1/templates/preview", self.__api_key, _template_body(locals()))

    def delete_template(self, id: str) -> None:
        """DELETE /v1/templates/<id>: renders naming it raise TEMPLATE_NOT_FOUND from now on (jobs admitted before finish)."""
        self._call("DELETE", f"/v1/templates/{_quote(id)}")

    def usage(self) -> Usage:
        """GET /v1/keys/usage: renders, previews, rate limit and concurrency of this key."""
        return Usage(self._call("GET", "/v1/keys/usage"))

    def webhook_secret(self) -> WebhookSecret:
        """GET /v1/keys/webhook-secret: ``secret``, the ``whsec_…`` secret that signs this key's callbacks."""
        return WebhookSecret(self._call("GET", "/v1/keys/webhook-secret"))

    def rotate_webhook_secret(self) -> RotatedWebhookSecret:
        """POST /v1/keys/webhook-secret/rotate: a new secret; the replaced one keeps signing callbacks
        (a second v1 signature) until ``previous_secret_expires_at``."""
        return RotatedWebhookSecret(self._call("POST", "/v1/keys/webhook-secret/rotate"))

    def rotate_key(self) -> RotatedKey:
        """POST /v1/keys/rotate: a new value for this key (same account), shown once.

        The key this client holds keeps working until ``previous_key_expires_at`` (24 h); make a new
        client with the new one.
        """
        return RotatedKey(self._call("POST", "/v1/keys/rotate"))

    def checkout(self, plan: str, *, idempotency_key: Optional[str] = None) -> CheckoutSession:
        """POST /v1/billing/checkout: starts an upgrade; send the user to ``checkout_url``."""
        return CheckoutSession(self._call("POST", "/v1/billing/checkout", {"plan": plan}, self._idempotency_key(idempotency_key)))

    def job(self, id: str) -> Job:
        """GET /v1/jobs/<id>: status, result and event history of one of this key's jobs."""
        return Job(self._call("GET", f"/v1/jobs/{urllib.parse.quote(id, safe='')}"))

    def wait_for_job(self, id: str, *, timeout: float = 90.0, interval: float = 1.0) -> Job:
        """Reads the job every ``interval`` seconds until it succeeded or failed, and returns it (check ``status``).

        Raises PressroomError TIMEOUT (status 0) when it is still queued or rendering after ``timeout`` seconds.
        """
        if not timeout >= 0 or not interval > 0:
            raise ValueError("Pressroom: timeout must be >= 0 and interval > 0")
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(id)
            if job.status in ("succeeded", "failed"):
                return job
            left = deadline - time.monotonic()
            if left <= 0:
                raise PressroomError(
                    "TIMEOUT",
                    0,
                    f"job {id} is still {job.status} after {timeout:g} s",
                    "Wait longer (timeout), or send webhook_url to be called when it finishes.",
                )
            time.sleep(min(interval, left))

    def create_batch(
        self,
        items: list[Mapping[str, Any]],
        *,
        webhook_url: Optional[str] = None,
        archive: Optional[bool] = None,
        idempotency_key: Optional[str] = None,
    ) -> Batch:
        """POST /v1/batches: 1 to 1,000 render or image requests (``"kind": "image"`` for an image), admitted all or none.

        One quota unit per item (QUOTA_EXCEEDED and nothing runs otherwise), counted once against the
        rate limit; the items run within the key's concurrency. Answers the batch, ``accepted``.
        ``webhook_url``: one ``batch.completed`` callback (``BatchCompletedEvent``) when every item has ended;
        ``archive=True``: a zip of the outputs, the batch's ``archive`` once it is ready.
        """
        body: dict[str, Any] = {"items": list(items)}
        if webhook_url is not None:
            body["webhook_url"] = webhook_url
        if archive is not None:
            body["archive"] = archive
        return Batch(self._call("POST", "/v1/batches", body, self._idempotency_key(idempotency_key)))

    def batch(self, id: str) -> Batch:
        """GET /v1/batches/<id>: the batch with its live counts."""
        return Batch(self._call("GET", f"/v1/batches/{_quote(id)}"))

    def batch_items(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> BatchItemPage:
        """GET /v1/batches/<id>/items: a page of its items in item order."""
        return BatchItemPage(self._call("GET", f"/v1/batches/{_quote(id)}/items" + query(limit=limit, cursor=cursor)))

    def cancel_batch(self, id: str) -> Batch:
        """DELETE /v1/batches/<id>: cancels the items that have not started (their units refunded); answers the batch, ``cancelled``."""
        return Batch(self._call("DELETE", f"/v1/batches/{_quote(id)}"))

    # The account's lists and a callback's replay (GET /v1/jobs, /v1/keys/usage/daily, /v1/webhooks/deliveries).

    def jobs(
        self,
        *,
        status: Optional[str] = None,
        kind: Optional[str] = None,
        template_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> JobPage:
        """GET /v1/jobs: this key's jobs, newest first, each as ``job(id)`` answers it; page with ``cursor=page.next_cursor``."""
        path = "/v1/jobs" + query(status=status, kind=kind, template_id=template_id, limit=limit, cursor=cursor)
        return JobPage(self._call("GET", path))

    def daily_usage(self, *, from_date: Optional[str] = None, to_date: Optional[str] = None) -> DailyUsage:
        """GET /v1/keys/usage/daily: ``data``, this key's jobs per UTC day (``YYYY-MM-DD``, both included, at most 92 days; default the current period to today)."""
        return DailyUsage(self._call("GET", "/v1/keys/usage/daily" + query(**{"from": from_date, "to": to_date})))

    def webhook_deliveries(self, *, job_id: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> DeliveryPage:
        """GET /v1/webhooks/deliveries: each attempt of this key's callbacks, newest first."""
        return DeliveryPage(self._call("GET", "/v1/webhooks/deliveries" + query(job_id=job_id, limit=limit, cursor=cursor)))

    def replay_webhook_delivery(self, id: str) -> Delivery:
        """POST /v1/webhooks/deliveries/<id>/replay: the callback sent again (same event id, signed afresh), one attempt; answers it, pending."""
        return Delivery(self._call("POST", f"/v1/webhooks/deliveries/{_quote(id)}/replay"))

    def delete_output(self, id_or_url: str) -> None:
        """DELETE /v1/outputs/<id>: deletes one of this key's outputs now, before it expires.

        Its signed URL raises URL_EXPIRED (410) from then on and nothing of it stays stored.
        Takes the output's id (a job's ``output_id``) or its URL. Another key's output, or one
        already gone, raises PressroomError NOT_FOUND (404).
        """
        output_id = id_or_url
        if "/" in id_or_url:
            path = urllib.parse.urlsplit(urllib.parse.urljoin(f"{self.base_url}/", id_or_url)).path
            match = re.fullmatch(r"/v1/outputs/([^/]+)", path)
            if not match:
                raise ValueError("Pressroom: delete_output needs an output's id or its /v1/outputs/<id> URL")
            output_id = urllib.parse.unquote(match.group(1))
        self._call("DELETE", f"/v1/outputs/{_quote(output_id)}")

    def download(self, url: str) -> bytes:
        """Downloads an output by its signed URL (absolute, or relative to ``base_url``).

        The API key is not sent: the signed URL is the credential. An expired or
        altered URL raises PressroomError URL_EXPIRED (410) or URL_INVALID (403).
        """
        if not isinstance(url, str) or not url:
            raise ValueError("Pressroom: download needs the url of a render or job")
        target = urllib.parse.urljoin(f"{self.base_url}/", url)
        if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
            raise ValueError("Pressroom: download URLs must be http(s)")
        return self._transport.request_bytes(target)
