/**
 * "Try it" on a template's page: checks the edited data against the
 * template's data_schema in the page, then renders it with the public demo
 * key and shows the result (the PDF in the browser's viewer, the PNG inline)
 * with its signed URL. API errors are shown as the API words them; a 429 with
 * the wait from Retry-After.
 */
import { validate } from "./schema-check.mjs";

const form = document.getElementById("try-it");
const field = document.getElementById("try-data");
const problems = document.getElementById("try-problems");
const status = document.getElementById("try-status");
const result = document.getElementById("try-result");
const schema = JSON.parse(document.getElementById("data-schema").textContent);

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Problems above the result; blameData marks the data field invalid (not for a 429 or an outage). */
function showProblems(title, lines, blameData = true) {
  problems.replaceChildren(element("p", {}, title));
  if (lines.length) {
    const list = element("ul");
    for (const line of lines) list.append(element("li", {}, line));
    problems.append(list);
  }
  problems.hidden = false;
  if (blameData) field.setAttribute("aria-invalid", "true");
}

function clear() {
  problems.hidden = true;
  problems.replaceChildren();
  field.removeAttribute("aria-invalid");
  result.hidden = true;
  result.replaceChildren();
  status.textContent = "";
}

/** The output through this page's own origin: the gateway serves /v1/outputs itself. */
const sameOrigin = (url) => {
  const parsed = new URL(url, window.location.href);
  return parsed.pathname + parsed.search;
};

function showResult(body) {
  const kib = (body.size_bytes / 1024).toFixed(1);
  result.append(element("h3", {}, "Result"));
  result.append(element("p", {}, `${body.content_type}, ${kib} KiB, link valid until ${new Date(body.expires_at).toLocaleString()}.`));
  if (body.content_type === "application/pdf") {
    result.append(element("iframe", { src: sameOrigin(body.url), title: "The rendered PDF", class: "output" }));
  } else {
    result.append(element("img", { src: sameOrigin(body.url), alt: "The rendered image", class: "output" }));
  }
  const link = element("p", {}, "Signed URL: ");
  link.append(element("a", { href: body.url, class: "signed-url", rel: "noreferrer" }, body.url));
  result.append(link);
  result.hidden = false;
}

function showApiError(response, body) {
  if (response.status === 429) {
    const wait = Number(response.headers.get("Retry-After"));
    showProblems(`${body.error} — try again in ${wait} second${wait === 1 ? "" : "s"}.`, [body.hint], false);
  } else {
    showProblems(`${body.error} (${body.code})`, [body.hint], response.status === 422);
  }
}

async function render(data) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  status.textContent = "Rendering…";
  try {
    const response = await fetch(form.dataset.endpoint, {
      method: "POST",
      headers: { Authorization: `Bearer ${form.dataset.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ template_id: form.dataset.template, data }),
    });
    const body = await response
      .json()
      .catch(() => ({ error: `unexpected answer (HTTP ${response.status})`, code: "INTERNAL_ERROR", hint: "Retry in a moment." }));
    status.textContent = "";
    if (response.status === 200) showResult(body);
    else if (response.ok) status.textContent = `Still rendering: job ${body.id} is ${body.status}.`;
    else showApiError(response, body);
  } catch {
    status.textContent = "";
    showProblems("The service could not be reached.", ["Check your connection and try again."], false);
  } finally {
    button.disabled = false;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  clear();
  let data;
  try {
    data = JSON.parse(field.value);
  } catch (err) {
    showProblems("The data is not valid JSON.", [err.message]);
    field.focus();
    return;
  }
  const found = validate(schema, data);
  if (found.length) {
    showProblems(
      `The data does not match the template's schema (${found.length} problem${found.length === 1 ? "" : "s"}); nothing was sent.`,
      found.map((p) => `${p.path}: ${p.message}`),
    );
    field.focus();
    return;
  }
  render(data);
});

form.addEventListener("reset", clear);
form.querySelector("button[type=submit]").disabled = false;
