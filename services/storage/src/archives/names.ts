/** The extension of an output's content type, for an item named by its index. */
const EXTENSIONS: Record<string, string> = { "application/pdf": "pdf", "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" };

/**
 * Each entry's name in a batch's zip: the item's options.filename, or its index with its
 * output's extension ("3.pdf"); a name already taken (ignoring case, as most file systems do)
 * gets a suffix before its extension: "invoice.pdf", "invoice (2).pdf", "invoice (3).pdf".
 */
export class ArchiveNames {
  private readonly taken = new Set<string>();

  next(item: { index: number; filename: string }, contentType: string): string {
    const base = item.filename || `${item.index}.${EXTENSIONS[contentType] ?? "bin"}`;
    const dot = base.lastIndexOf(".");
    const [stem, extension] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ""];
    let name = base;
    for (let n = 2; this.taken.has(name.toLowerCase()); n++) name = `${stem} (${n})${extension}`;
    this.taken.add(name.toLowerCase());
    return name;
  }
}
