import { z } from "@pressroom/platform";
import { WATERMARK_DEFAULTS } from "@pressroom/domain";

/** What a PDF says about itself, its watermark and its encryption: parts of a render's `options` (see options.ts). */

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
