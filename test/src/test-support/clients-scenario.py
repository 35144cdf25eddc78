"""The clients' shared scenario, walked by the Python client (test/src/clients-parity.e2e.test.ts walks it with the JavaScript client).

``scenario``: PRESSROOM_BASE_URL, PRESSROOM_API_KEY and PRESSROOM_HOOK_URL in the
environment; prints what it saw as JSON. ``verify``: reads {body, headers, secret}
on stdin and prints the event construct_event makes of it, or {"refused": code}.
"""

from __future__ import annotations

import json
import os
import sys

from pressroom import Pressroom, PressroomSignatureError, construct_event


def scenario() -> dict[str, object]:
    client = Pressroom(api_key=os.environ["PRESSROOM_API_KEY"], max_retries=2)
    secret_before = client.webhook_secret().secret
    queued = client.render(html="<h1>{{title}}</h1>", data={"title": "Parity"}, webhook_url=os.environ["PRESSROOM_HOOK_URL"])
    job = client.wait_for_job(queued.id, timeout=90, interval=0.2)
    document = client.download(job.url)
    preview = client.template_preview("invoice")
    rotated = client.rotate_webhook_secret()
    usage = client.usage()
    return {
        "compared": {
            "queued": sorted(queued),
            "queued_status": queued.status,
            "job": sorted(job),
            "job_status": job.status,
            "document": document[:5].decode("latin-1"),
            "preview": preview[1:4].decode("latin-1"),
            "rotated": sorted(rotated),
            "secret_replaced": rotated.secret != secret_before and client.webhook_secret().secret == rotated.secret,
            "usage": sorted(usage),
            "answers": [
                sorted(client.templates()),
                sorted(client.webhook_secret()),
                sorted(client.daily_usage()),
                sorted(client.jobs(limit=1)),
                sorted(client.webhook_deliveries(limit=1)),
            ],
        },
        "job_id": queued.id,
        "secret": secret_before,
    }


def verify() -> dict[str, object]:
    given = json.load(sys.stdin)
    try:
        return {"event": construct_event(given["body"].encode("utf-8"), given["headers"], given["secret"])}
    except PressroomSignatureError as err:
        return {"refused": err.code}


if __name__ == "__main__":
    print(json.dumps(scenario() if sys.argv[1:] == ["scenario"] else verify()))
