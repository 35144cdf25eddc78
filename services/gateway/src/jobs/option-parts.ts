import { AppError, MAX_OUTPUT_TTL_SECONDS, z } from "@pressroom/platform";
import { DISPOSITIONS, isPlanId, MIN_OUTPUT_TTL_SECONDS, PLAN_ORDER, PLANS, WATERMARK_DEFAULTS } from "@pressroom/domain";

/** What a PDF says about itself, its watermark, its encryption, its download and its dates: parts of a render's `options` (see options.ts). */

export const text = (max: number, description: string) =>
  z.string({ error: "must be a string" }).min(1, "must not be empty").max(max, `must be at most ${max} characters`).meta({ description });

export const flag = (description: string) => z.boolean({ error: "must be true or false" }).meta({ description });

export const PdfMetadata = z
  .strictObject({
    title: text(1_000, "Title.").optional(),
    author: text(1_000, "Author.").optional(),
    subject: text(1_000, "Subject.").optional(),
    keywords: z
      .array(text(200, "A keyword."), { error: "must be an array of strings" })
      .max(50, "must have at most 50 keywords")
      .optional()
      .meta({ description: "Keywords, at most 50." }),
    creator: text(1_000, "The application that made the document's content.").optional(),
  })
  .meta({ id: "PdfMetadata", description: "What the PDF says about itself, in its document information and its XMP metadata." });

export const Watermark = z
  .strictObject({
    text: text(200, "The stamp, drawn as selectable text on every page."),
    opacity: z
      .number({ error: "must be a number from 0 to 1" })
      .min(0, "must be from 0 to 1")
      .max(1, "must be from 0 to 1")
      .optional()
      .meta({
        description: `0 (invisible) to 1; default ${WATERMARK_DEFAULTS.opacity}.`,
      }),
    angle: z
      .number({ error: "must be a number of degrees" })
      .min(-360, "must be from -360 to 360")
      .max(360, "must be from -360 to 360")
      .optional()
      .meta({
        description: `Degrees counter-clockwise; default ${WATERMARK_DEFAULTS.angle}.`,
      }),
    font_size: z.number({ error: "must be a number" }).min(1, "must be from 1 to 500").max(500, "must be from 1 to 500").optional().meta({
      description: "Points; default: as large as fits the page.",
    }),
  })
  .meta({ id: "Watermark" });

const PASSWORD_HINT = "Use a password that does not start with - and has no control characters (line breaks, tabs).";

/** A password qpdf takes as one argument: not an option (a leading -), no control characters (an argument a line). */
const password = (description: string) =>
  z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .max(127, "must be at most 127 characters")
    .check((ctx) => {
      const problem = ctx.value.startsWith("-") ? "must not start with -" : /\p{Cc}/u.test(ctx.value) ? "must not contain control characters" : undefined;
      if (problem) ctx.issues.push({ code: "custom", message: problem, input: ctx.value, params: { hint: PASSWORD_HINT } });
    })
    .meta({ description: `${description} At most 127 characters, not starting with -, without control characters.` });

export const Encryption = z
  .strictObject({
    user_password: password("Needed to open the document; without it the document opens freely and the permissions still apply.").optional(),
    owner_password: password("Needed to change the permissions."),
    permissions: z
      .strictObject({
        print: flag("Allow printing."),
        copy: flag("Allow copying text and images."),
        modify: flag("Allow changing the document."),
        annotate: flag("Allow adding annotations and filling forms."),
      })
      .meta({ description: "What a reader who opened the document with the user password (or none) may do." }),
  })
  .meta({
    id: "Encryption",
    description: "AES-256 encryption. The passwords are never logged, traced, kept in the job's events or shown in its status.",
  });

export const Disposition = z.enum(DISPOSITIONS, { error: `must be ${DISPOSITIONS.join(" or ")}` }).meta({
  description:
    "How downloads of the output answer: Content-Disposition inline (shown in the browser) or attachment (saved), with its file name. " +
    "Default: attachment when filename is given, inline otherwise.",
});

const LIFETIME_RULE = `must be a whole number of seconds from ${MIN_OUTPUT_TTL_SECONDS} to ${MAX_OUTPUT_TTL_SECONDS} (7 days)`;

export const OutputTtlSeconds = z
  .int({ error: LIFETIME_RULE })
  .min(MIN_OUTPUT_TTL_SECONDS, LIFETIME_RULE)
  .max(MAX_OUTPUT_TTL_SECONDS, LIFETIME_RULE)
  .meta({
    description:
      `How long the output is kept, and its signed URL valid, in seconds: ${MIN_OUTPUT_TTL_SECONDS} up to the key's plan's maximum ` +
      `(${PLAN_ORDER.map((id) => `${PLANS[id].name} ${PLANS[id].maxOutputTtlSeconds}`).join(", ")}); over it, 422 PAYLOAD_INVALID naming the maximum. ` +
      "Default: 24 hours (the service's OUTPUT_TTL_SECONDS). DELETE /v1/outputs/{id} removes it sooner.",
  });

/** options.output_ttl_seconds over the key's plan's maximum: 422 naming the field and that maximum. */
export function outputTtlBeyondPlan(ttlSeconds: number | undefined, planId: string): AppError | undefined {
  if (ttlSeconds === undefined || !isPlanId(planId)) return undefined;
  const { name, maxOutputTtlSeconds: max } = PLANS[planId];
  if (ttlSeconds <= max) return undefined;
  return new AppError(
    "PAYLOAD_INVALID",
    `options.output_ttl_seconds: ${ttlSeconds} is over the ${name} plan's maximum of ${max} seconds`,
    `Ask for at most ${max} seconds, or upgrade the plan (POST /v1/billing/checkout) to keep outputs longer.`,
  );
}

/** Whether Intl takes `make()` without throwing (a locale or time zone it knows). */
function intlTakes(make: () => unknown): boolean {
  try {
    make();
    return true;
  } catch {
    return false;
  }
}

export const Locale = z
  .string({ error: "must be a BCP 47 language tag such as de-DE" })
  .max(35, "must be at most 35 characters")
  .refine(
    (tag) => /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(tag) && intlTakes(() => new Intl.DateTimeFormat(tag)),
    "must be a BCP 47 language tag such as de-DE",
  )
  .meta({
    description: "The locale of the header's and footer's date (class \"date\"), a BCP 47 tag such as de-DE; default en-US (11/28/26).",
    examples: ["de-DE"],
  });

export const TimeZone = z
  .string({ error: "must be an IANA time zone such as Europe/Berlin" })
  .max(64, "must be at most 64 characters")
  .refine((zone) => intlTakes(() => new Intl.DateTimeFormat("en-US", { timeZone: zone })), "must be an IANA time zone such as Europe/Berlin")
  .meta({
    description:
      "The time zone whose day the header's and footer's date (class \"date\") shows, such as Europe/Berlin; default: the service's own (UTC in its image).",
    examples: ["Europe/Berlin"],
  });
