import { pdfaPart, WATERMARK_DEFAULTS, type EncryptPermissions, type PdfaLevel as Level, type PdfMetadata, type RenderOptions } from "@pressroom/domain";

export type { PdfMetadata };

export interface PdfaLevel {
  /** "PDF/A-1b", "PDF/A-2b" or "PDF/A-3b" as asked. */
  name: Level;
  part: 1 | 2 | 3;
}

export interface Watermark {
  text: string;
  /** 0–1. */
  opacity: number;
  /** Degrees, counter-clockwise. */
  angle: number;
  /** Points; absent: sized to the page. */
  fontSize?: number;
}

export interface Encryption {
  userPassword: string;
  ownerPassword: string;
  permissions: EncryptPermissions;
}

/** The post-processing a job asked for; every field absent when not asked. */
export interface PostProcessing {
  metadata?: PdfMetadata;
  watermark?: Watermark;
  pdfa?: PdfaLevel;
  pdfua: boolean;
  encrypt?: Encryption;
  /** Test mode (issue 46): TEST stamped on every page, after the document's own content and watermark. */
  test: boolean;
}

/** Test mode's stamp on a PDF: TEST across the middle of every page, as real text (level, so any text extraction reads it), drawn like a watermark. */
export const TEST_STAMP: Watermark = { text: "TEST", opacity: 0.35, angle: 0 };

/** What of a job's options (and its test mode) is post-processing (the gateway validated their ranges), with defaults filled in. */
export function postProcessingOf(options: RenderOptions, test = false): PostProcessing {
  const pdfa = options.pdfa ? { name: options.pdfa, part: pdfaPart(options.pdfa) } : undefined;
  const { watermark, encrypt, metadata } = options;
  return {
    ...(metadata ? { metadata } : {}),
    ...(watermark
      ? {
          watermark: {
            text: watermark.text,
            opacity: watermark.opacity ?? WATERMARK_DEFAULTS.opacity,
            angle: watermark.angle ?? WATERMARK_DEFAULTS.angle,
            ...(watermark.fontSize !== undefined ? { fontSize: watermark.fontSize } : {}),
          },
        }
      : {}),
    ...(pdfa ? { pdfa } : {}),
    pdfua: options.pdfua === true,
    test,
    ...(encrypt
      ? {
          encrypt: {
            userPassword: encrypt.userPassword ?? "",
            ownerPassword: encrypt.ownerPassword,
            permissions: encrypt.permissions ?? { print: false, copy: false, modify: false, annotate: false },
          },
        }
      : {}),
  };
}

export function wantsPostProcessing(p: PostProcessing): boolean {
  return Boolean(p.metadata || p.watermark || p.pdfa || p.pdfua || p.encrypt || p.test);
}

/** `over`'s fields where it has them, `base`'s elsewhere. */
export function metadataOver(base: PdfMetadata, over: PdfMetadata | undefined): PdfMetadata {
  const given = Object.entries(over ?? {}).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
  return { ...base, ...Object.fromEntries(given) };
}
