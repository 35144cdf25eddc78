/** What the XMP packet says; the same values as the document information dictionary. */
export interface XmpFields {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  creator?: string;
  producer?: string;
  created: Date;
  modified: Date;
  /** PDF/A identification: part 1, 2 or 3, conformance B. */
  pdfa?: { part: number; conformance: "B" };
  /** PDF/UA identification (ISO 14289-1). */
  pdfua: boolean;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function langAlt(value: string): string {
  return `<rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(value)}</rdf:li></rdf:Alt>`;
}

/**
 * The XMP metadata packet (ISO 16684-1) of a document: Dublin Core title, creator and
 * description, the PDF schema's keywords and producer, the XMP basic creator tool and dates,
 * and PDF/A's and PDF/UA's identification. Text is XML-escaped; the packet is written
 * read-only (end="r"), unfiltered, as PDF/A asks of the catalog's metadata stream.
 */
export function xmpPacket(fields: XmpFields): string {
  const dc = [
    fields.title !== undefined ? `<dc:title>${langAlt(fields.title)}</dc:title>` : "",
    fields.author !== undefined ? `<dc:creator><rdf:Seq><rdf:li>${escapeXml(fields.author)}</rdf:li></rdf:Seq></dc:creator>` : "",
    fields.subject !== undefined ? `<dc:description>${langAlt(fields.subject)}</dc:description>` : "",
  ].join("");
  const pdf = [
    fields.keywords !== undefined ? `<pdf:Keywords>${escapeXml(fields.keywords)}</pdf:Keywords>` : "",
    fields.producer !== undefined ? `<pdf:Producer>${escapeXml(fields.producer)}</pdf:Producer>` : "",
  ].join("");
  const xmp = [
    fields.creator !== undefined ? `<xmp:CreatorTool>${escapeXml(fields.creator)}</xmp:CreatorTool>` : "",
    `<xmp:CreateDate>${fields.created.toISOString()}</xmp:CreateDate>`,
    `<xmp:ModifyDate>${fields.modified.toISOString()}</xmp:ModifyDate>`,
    `<xmp:MetadataDate>${fields.modified.toISOString()}</xmp:MetadataDate>`,
  ].join("");
  const descriptions = [
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">${dc}</rdf:Description>`,
    `<rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">${pdf}</rdf:Description>`,
    `<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">${xmp}</rdf:Description>`,
    fields.pdfa
      ? `<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>${fields.pdfa.part}</pdfaid:part><pdfaid:conformance>${fields.pdfa.conformance}</pdfaid:conformance></rdf:Description>`
      : "",
    fields.pdfua ? `<rdf:Description rdf:about="" xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"><pdfuaid:part>1</pdfuaid:part></rdf:Description>` : "",
  ].join("\n");
  return [
    `<?xpacket begin="\u{feff}" id="W5M0MpCehiHzreSzNTczkc9d"?>`,
    `<x:xmpmeta xmlns:x="adobe:ns:meta/">`,
    `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">`,
    descriptions,
    `</rdf:RDF>`,
    `</x:xmpmeta>`,
    `<?xpacket end="r"?>`,
  ].join("\n");
}
