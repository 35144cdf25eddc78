import type { jobEventsV1 } from "@pressroom/contracts";
import { z } from "@pressroom/platform";
import {
  MAX_DESTINATION_HEADER_VALUE_LENGTH,
  MAX_DESTINATION_HEADERS,
  MAX_DESTINATION_URL_LENGTH,
  RESERVED_DESTINATION_HEADERS,
  destinationHeadersProblem,
  destinationUrlProblem,
} from "@pressroom/domain";
import { grouped } from "../limits";

/**
 * A request's `destination` (issue 42): the customer's presigned URL the
 * output is PUT to before the job succeeds. Its url and headers are
 * credentials: no message of a refusal repeats them, and the job shows only
 * the host (see destinationOf and the domain's retainedDestination).
 */
export const Destination = z
  .strictObject({
    url: z
      .unknown()
      .check((ctx) => {
        const problem = destinationUrlProblem(ctx.value);
        if (problem) ctx.issues.push({ code: "custom", message: problem.replace(/^destination\.url: /, ""), input: ctx.value });
      })
      .meta({
        type: "string",
        format: "uri",
        maxLength: MAX_DESTINATION_URL_LENGTH,
        pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
        description:
          `A URL signed in advance for a plain PUT (an S3, R2 or GCS presigned URL, an Azure Blob SAS URL): absolute https on the default port, ` +
          `without user info, at most ${grouped(MAX_DESTINATION_URL_LENGTH)} characters. Its query (the signature) is never shown, logged or kept in the job.`,
      }),
    headers: z
      .record(z.string(), z.unknown(), { error: "must be an object of header names to string values" })
      .check((ctx) => {
        const problem = destinationHeadersProblem(ctx.value);
        if (!problem) return;
        const [, name, message] = /^destination\.headers(?:\.([^:]*))?: (.*)$/.exec(problem) ?? [];
        ctx.issues.push({ code: "custom", message: message ?? problem, input: ctx.value, ...(name ? { path: [name] } : {}) });
      })
      .optional()
      .meta({
        description:
          `Headers sent with the PUT, as the URL's signature requires them (e.g. x-ms-blob-type: BlockBlob for Azure, Content-Type when it was signed): ` +
          `at most ${MAX_DESTINATION_HEADERS}, each value at most ${grouped(MAX_DESTINATION_HEADER_VALUE_LENGTH)} characters, not ${RESERVED_DESTINATION_HEADERS.join(", ")}. ` +
          "Without Content-Type the output's own is sent. Their values are never shown, logged or kept in the job.",
      }),
  })
  .meta({
    id: "Destination",
    description:
      "Where the output is also delivered: once made, it is sent by HTTP PUT to url, through the same network guard as webhooks " +
      "(public addresses only, the resolved address pinned, no redirects), retried on the webhooks' schedule. The job succeeds only when the " +
      "destination answers 2xx; one that never does ends the job failed, DESTINATION_FAILED (not refunded: the document was made). " +
      "The job shows destination.host and each attempt in its events (status, duration, host), never the URL's path or query.",
  });

/** The request's destination as the job contract carries it. */
export function destinationOf(parsed: z.infer<typeof Destination>): jobEventsV1.Destination {
  const url = new URL(parsed.url as string);
  return { url: url.href, headers: (parsed.headers ?? {}) as Record<string, string>, host: url.hostname };
}

export const DESTINATION_HINT =
  'Send destination as {"url": "https://…", "headers": {…}}: a URL signed for a PUT, on the default port, and only the headers its signature needs.';
