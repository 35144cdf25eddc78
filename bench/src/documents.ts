import type { renderV1 } from "@pressroom/contracts";
import { compileTemplate, engineJob, loadBuiltinTemplates, pageSettingsOf } from "@pressroom/render/catalog";
import type { RenderJob } from "@pressroom/render/engine";

export interface BenchDocument {
  name: string;
  endpoint: "/v1/render" | "/v1/image";
  templateId: string;
  data: Record<string, unknown>;
  /** Sent as raw HTML (`html`) rather than by its template's id (a document with script). */
  raw?: boolean;
  /** The exact HTML Pressroom renders for this template and data. */
  html: string;
  kind: "pdf" | "png";
  /** What Pressroom's engine renders for it: the HTML with the template's settings (render's one place for that). */
  job: RenderJob;
  /** The template's page settings, for the engines compared (puppeteer's own pdf(), jsreport). */
  pdf?: renderV1.PageSettings;
  image?: { width: number; height: number };
}

/** The three documents of the benchmark: a one-page invoice, a 10-page report, a 1200×630 social card. */
export function benchDocuments(): BenchDocument[] {
  const templates = new Map(loadBuiltinTemplates().map((t) => [t.id, t]));
  return [
    ["invoice (1 page, 20 items)", "invoice"],
    ["report (10 pages)", "report"],
    ["social card (1200×630 PNG)", "social-card"],
  ].map(([name, id]) => {
    const t = templates.get(id!);
    if (!t) throw new Error(`built-in template ${id} is missing`);
    const html = compileTemplate(t.body)(t.sampleData);
    return {
      name: name!,
      endpoint: t.output === "png" ? "/v1/image" : "/v1/render",
      templateId: t.id,
      data: t.sampleData,
      html,
      kind: t.output,
      job: engineJob({ ...t, owner: "" }, { html, kind: t.output, options: {}, keyId: "" }),
      pdf: pageSettingsOf(t),
      image: t.image ?? undefined,
    };
  });
}

/** The invoice with a small script, sent as raw HTML: the document whose window cannot be reused. */
export function scriptedInvoice(invoice: BenchDocument): BenchDocument {
  const html = invoice.html.replace("</body>", '<script>document.body.dataset.rendered = String(document.querySelectorAll("tr").length);</script></body>');
  if (html === invoice.html) throw new Error("the invoice has no </body> to put its script before");
  return { ...invoice, name: "invoice with a script (raw HTML)", raw: true, data: {}, html, job: { ...invoice.job, html } };
}

/** A request's body for the document: its template and data, or its raw HTML. */
export function requestBody(doc: BenchDocument): string {
  return JSON.stringify(doc.raw ? { html: doc.html, data: doc.data } : { template_id: doc.templateId, data: doc.data });
}
