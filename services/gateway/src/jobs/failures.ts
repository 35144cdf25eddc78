import { AppError } from "@pressroom/platform";
import type { JobOutcome } from "@pressroom/domain";

/** What to do about a document's own failure, by what its message says went wrong (the first that fits). */
const RENDER_FAILED_ADVICE: [RegExp, string][] = [
  [
    /could not be rendered: it answered HTTP 4\d\d/,
    "Check the url: its server answered that the page does not exist or is not public; a page behind a login needs its credentials in url_options (headers, cookies or basic_auth).",
  ],
  [/could not be rendered: it answered HTTP 5\d\d/, "The url's server failed to answer the page: render it again once that server works."],
  [/not an HTML page/, "Give a url that answers an HTML page; show an image or a PDF by putting it in HTML (html with an <img> or an <iframe>)."],
  [/could not be rendered: /, "Check that the url's host name exists and its server answers from the public internet on port 80 or 443."],
  [/page_ranges .* selects no page/, "Choose page_ranges within the pages the message names, or leave page_ranges out."],
  [/Missing helper/, "Use only the helpers money, date, add and multiply (there are no partials), or put the computed value into data."],
  [/template error/, "Fix the template at the place the message names, or the data it reads."],
  [/pdfua: .*title/, "Give the document a title: options.metadata.title or a <title> element."],
  [/pdfua: .*language/, 'Say the document\'s language on its root element, e.g. <html lang="en">.'],
  [
    /options\.selector .* (matches no element|no size)/,
    "Check the selector against the page as it is once loaded (wait_for an element a script adds), or leave it out.",
  ],
  [/options\.selector .* not a valid CSS selector/, 'Give a CSS selector document.querySelector takes, e.g. "#chart" or ".card:first-child".'],
  [/options\.full_page: /, "Capture a part of the page instead: a selector, or a clip within the size cap."],
  [/wait_for/, "Check the wait_for condition (it is evaluated in the page once it loaded), or make the page reach it sooner."],
  [/script threw/, "Fix the script error the message names (its first line), then render again."],
  [/page cap/, "Make the document shorter, or split it into several renders."],
  [/size cap|memory limit|output cap/, "Make the document smaller: fewer or smaller images, less data."],
  [/deadline/, "Make the document faster to load: fewer sub-resources, no slow scripts or waits."],
];

/** The hint of a RENDER_FAILED: what fits its cause, and where the job's history is. */
function renderFailedHint(message: string, jobId: string): string {
  const advice = RENDER_FAILED_ADVICE.find(([pattern]) => pattern.test(message))?.[1] ?? "Fix the document and try again.";
  return `${advice} GET /v1/jobs/${jobId} shows the job's history.`;
}

/** The error a failed job is answered with: its document's own failure, its destination's, or ours (refunded). */
export function failedError(job: JobOutcome): AppError {
  if (job.error?.code === "RENDER_FAILED") return new AppError("RENDER_FAILED", job.error.message, renderFailedHint(job.error.message, job.id));
  if (job.error?.code === "DESTINATION_FAILED") {
    return new AppError(
      "DESTINATION_FAILED",
      job.error.message,
      `Check that destination.url is signed for a PUT and not expired, and the headers its signature needs; GET /v1/jobs/${job.id} lists every attempt.`,
    );
  }
  return new AppError("INTERNAL_ERROR", "the render failed on our side; the quota unit was refunded", "Retry with exponential backoff.");
}
