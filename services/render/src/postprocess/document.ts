import { readFile } from "node:fs/promises";
import fontkit from "@pdf-lib/fontkit";
import { PDFDocument, PDFName, PDFOperator, PDFOperatorNames, PDFString, degrees, grayscale, type PDFFont } from "pdf-lib";
import { RenderFailure } from "../engine";
import { xmpPacket } from "./xmp";
import type { PdfMetadata, PdfaLevel, Watermark } from "./options";

/**
 * Debian's Liberation Sans (fonts-liberation2, which render's image and setup.sh install): the
 * watermark's font, embedded as a subset. Bookworm keeps it under liberation2/; trixie (render's
 * image), where fonts-liberation2 moved into fonts-liberation, under liberation/.
 */
export const WATERMARK_FONTS = [
  "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
  "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];
/** Ghostscript's sRGB profile (Debian's libgs-common): the PDF/A output intent. */
export const SRGB_ICC = "/usr/share/color/icc/ghostscript/srgb.icc";

const fileCache = new Map<string, Promise<Uint8Array>>();

function cachedFile(path: string): Promise<Uint8Array> {
  let bytes = fileCache.get(path);
  if (!bytes) {
    bytes = readFile(path);
    bytes.catch(() => fileCache.delete(path));
    fileCache.set(path, bytes);
  }
  return bytes;
}

/** The first of WATERMARK_FONTS that this machine has. */
async function watermarkFont(): Promise<Uint8Array> {
  for (const path of WATERMARK_FONTS) {
    const bytes = await cachedFile(path).catch(() => undefined);
    if (bytes) return bytes;
  }
  throw new Error(`no watermark font: none of ${WATERMARK_FONTS.join(", ")} exists (fonts-liberation2)`);
}

export function loadPdf(pdf: Uint8Array): Promise<PDFDocument> {
  return PDFDocument.load(pdf, { updateMetadata: false });
}

const PDF_17_HEADER = Buffer.from("%PDF-1.7");

/**
 * PDF/A-1 is PDF 1.4: no object streams, and a header that says 1.4 (pdf-lib always writes
 * 1.7; the two headers have the same length, so no offset moves). The other levels and plain
 * PDFs keep object streams.
 */
export async function savePdf(doc: PDFDocument, pdfa: PdfaLevel | undefined): Promise<Uint8Array> {
  const saved = await doc.save({ useObjectStreams: pdfa?.part !== 1, updateFieldAppearances: false });
  if (pdfa?.part === 1) {
    if (!PDF_17_HEADER.equals(saved.subarray(0, PDF_17_HEADER.length))) throw new Error("pdf-lib wrote an unexpected header");
    saved.set(Buffer.from("%PDF-1.4"), 0);
  }
  return saved;
}

/**
 * The document's own information (what Chromium wrote: its <title>, creator) and the document
 * without its information dictionary. Ghostscript's PDF/A-1 conversion stops on text it cannot
 * carry into XMP (any character outside Latin-1), so the information goes around it and
 * `describe` writes it back, with the request's metadata over it. The dictionary is left
 * empty rather than removed: without one, Ghostscript drops the document's outline.
 */
export async function setInfoAside(pdf: Uint8Array): Promise<{ pdf: Uint8Array; info: PdfMetadata }> {
  const doc = await loadPdf(pdf);
  const keywords = doc.getKeywords();
  const info: PdfMetadata = {
    ...definedOnly({ title: doc.getTitle(), author: doc.getAuthor(), subject: doc.getSubject(), creator: doc.getCreator() }),
    keywords: keywords ? [keywords] : [],
  };
  doc.context.trailerInfo.Info = doc.context.register(doc.context.obj({}));
  return { pdf: await savePdf(doc, undefined), info };
}

function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
}

/**
 * Draws `watermark.text` across the middle of every page, rotated by its angle, as real text
 * in an embedded subset of Liberation Sans (with a ToUnicode map, so it can be selected and
 * found by text extraction), at its opacity. It is marked as an artifact, so a tagged
 * document's structure (and a screen reader) ignores it.
 */
export async function drawWatermark(doc: PDFDocument, watermark: Watermark): Promise<void> {
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(await watermarkFont(), { subset: true });
  for (const page of doc.getPages()) {
    const { width, height } = page.getSize();
    const size = watermark.fontSize ?? Math.min(width, height) / Math.max(4, watermark.text.length * 0.6);
    const origin = centredOrigin(font, watermark.text, size, watermark.angle, width / 2, height / 2);
    page.pushOperators(PDFOperator.of(PDFOperatorNames.BeginMarkedContent, [PDFName.of("Artifact")]));
    page.drawText(watermark.text, { ...origin, font, size, rotate: degrees(watermark.angle), color: grayscale(0.5), opacity: watermark.opacity });
    page.pushOperators(PDFOperator.of(PDFOperatorNames.EndMarkedContent));
  }
}

/** Where a line of text starts so that its middle lands on (cx, cy) once rotated by `angle` degrees about its start. */
function centredOrigin(font: PDFFont, text: string, size: number, angle: number, cx: number, cy: number): { x: number; y: number } {
  const halfWidth = font.widthOfTextAtSize(text, size) / 2;
  const halfHeight = font.heightAtSize(size, { descender: false }) / 2;
  const rad = (angle * Math.PI) / 180;
  return {
    x: cx - (halfWidth * Math.cos(rad) - halfHeight * Math.sin(rad)),
    y: cy - (halfWidth * Math.sin(rad) + halfHeight * Math.cos(rad)),
  };
}

export interface DescribeRequest {
  metadata?: PdfMetadata;
  pdfa?: PdfaLevel;
  pdfua: boolean;
}

/**
 * Writes what the document says about itself: the metadata asked for in the document
 * information dictionary and, with the same values (as PDF/A requires), in an XMP packet that
 * also identifies PDF/A and PDF/UA conformance. PDF/A adds Ghostscript's sRGB profile as the
 * output intent; PDF/UA asks for what Chromium's tagged output should already carry (/MarkInfo
 * Marked, a /Lang, DisplayDocTitle) and refuses a document without a title or a language,
 * which no option can supply for it.
 */
export async function describe(doc: PDFDocument, request: DescribeRequest): Promise<void> {
  const { metadata } = request;
  if (metadata?.title !== undefined) doc.setTitle(metadata.title, { showInWindowTitleBar: request.pdfua });
  if (metadata?.author !== undefined) doc.setAuthor(metadata.author);
  if (metadata?.subject !== undefined) doc.setSubject(metadata.subject);
  if (metadata?.keywords?.length) doc.setKeywords([metadata.keywords.join(", ")]);
  if (metadata?.creator !== undefined) doc.setCreator(metadata.creator);
  const now = new Date();
  const created = doc.getCreationDate() ?? now;
  doc.setCreationDate(created);
  doc.setModificationDate(now);
  if (request.pdfua) markAccessible(doc);
  if (request.pdfa) await addOutputIntent(doc);
  const xmp = xmpPacket({
    title: doc.getTitle(),
    author: doc.getAuthor(),
    subject: doc.getSubject(),
    keywords: doc.getKeywords(),
    creator: doc.getCreator(),
    producer: doc.getProducer(),
    created,
    modified: now,
    ...(request.pdfa ? { pdfa: { part: request.pdfa.part, conformance: "B" as const } } : {}),
    pdfua: request.pdfua,
  });
  const stream = doc.context.stream(Buffer.from(xmp, "utf8"), { Type: "Metadata", Subtype: "XML" });
  doc.catalog.set(PDFName.of("Metadata"), doc.context.register(stream));
}

function markAccessible(doc: PDFDocument): void {
  const { catalog } = doc;
  if (!catalog.get(PDFName.of("StructTreeRoot"))) throw new RenderFailure("invalid_document", "pdfua: the printed document has no tag structure");
  if (!doc.getTitle()) throw new RenderFailure("invalid_document", "pdfua: the document needs a title: set options.metadata.title or the document's <title>");
  if (!catalog.get(PDFName.of("Lang")))
    throw new RenderFailure("invalid_document", 'pdfua: the document needs a language: set it on its root element, e.g. <html lang="en">');
  catalog.set(PDFName.of("MarkInfo"), doc.context.obj({ Type: "MarkInfo", Marked: true }));
  doc.setTitle(doc.getTitle() ?? "", { showInWindowTitleBar: true });
}

async function addOutputIntent(doc: PDFDocument): Promise<void> {
  const profile = doc.context.flateStream(await cachedFile(SRGB_ICC), { N: 3 });
  const intent = doc.context.obj({
    Type: "OutputIntent",
    S: "GTS_PDFA1",
    OutputConditionIdentifier: PDFString.of("sRGB IEC61966-2.1"),
    Info: PDFString.of("sRGB IEC61966-2.1"),
    DestOutputProfile: doc.context.register(profile),
  });
  doc.catalog.set(PDFName.of("OutputIntents"), doc.context.obj([doc.context.register(intent)]));
}
