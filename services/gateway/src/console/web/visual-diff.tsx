import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "./api";
import { versionPreview } from "./editor/preview";
import { Loading, Problem, asApiError } from "./ui";

/** The colour a changed pixel is marked in; unchanged ones are shown faded, so that the marks stand out. */
const MARK = [219, 0, 122] as const;

/** The decoded pixels of an image at an object URL. */
async function pixelsOf(url: string): Promise<ImageData> {
  const image = new Image();
  image.src = url;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext("2d")!;
  context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, canvas.width, canvas.height);
}

/**
 * Compares two renders pixel by pixel: every pixel whose colour differs (or that only one of
 * them has, when their sizes differ) is marked; the others are `after`'s, faded.
 */
export function comparePixels(before: ImageData, after: ImageData): { marked: ImageData; changed: number } {
  const width = Math.max(before.width, after.width);
  const height = Math.max(before.height, after.height);
  const marked = new ImageData(width, height);
  let changed = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const a = x < before.width && y < before.height ? (y * before.width + x) * 4 : -1;
      const b = x < after.width && y < after.height ? (y * after.width + x) * 4 : -1;
      const at = (y * width + x) * 4;
      let same = a >= 0 && b >= 0;
      for (let c = 0; same && c < 4; c++) same = before.data[a + c] === after.data[b + c];
      if (same) {
        const grey = 0.3 * after.data[b]! + 0.59 * after.data[b + 1]! + 0.11 * after.data[b + 2]!;
        const faded = 255 - (255 - grey) * 0.3;
        marked.data.set([faded, faded, faded, 255], at);
      } else {
        changed++;
        marked.data.set([...MARK, 255], at);
      }
    }
  }
  return { marked, changed };
}

type Compared = { before: string; after: string; marked: ImageData; changed: number; total: number };

/** The stored previews of two versions side by side, and the pixels that changed between them marked on a third. */
export function VisualDiff({ id, from, to }: { id: string; from: number; to: number }) {
  const [compared, setCompared] = useState<Compared | { error: ApiError } | undefined>();
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    let urls: string[] = [];
    let current = true;
    setCompared(undefined);
    Promise.all([versionPreview(id, from), versionPreview(id, to)])
      .then(async ([before, after]) => {
        urls = [before!, after!];
        const [a, b] = await Promise.all([pixelsOf(before!), pixelsOf(after!)]);
        const { marked, changed } = comparePixels(a!, b!);
        if (current) setCompared({ before: before!, after: after!, marked, changed, total: marked.width * marked.height });
      })
      .catch((error: unknown) => current && setCompared({ error: asApiError(error) }));
    return () => {
      current = false;
      for (const url of urls) URL.revokeObjectURL(url);
    };
  }, [id, from, to]);
  useEffect(() => {
    if (!compared || "error" in compared || !canvas.current) return;
    canvas.current.width = compared.marked.width;
    canvas.current.height = compared.marked.height;
    canvas.current.getContext("2d")!.putImageData(compared.marked, 0, 0);
  }, [compared]);

  if (!compared) return <Loading what="the two versions' previews" />;
  if ("error" in compared) return <Problem error={compared.error} title="Could not compare the previews" />;
  const share = compared.total ? (100 * compared.changed) / compared.total : 0;
  const summary =
    compared.changed === 0
      ? "No pixel changed."
      : `${compared.changed.toLocaleString("en")} pixels changed (${share < 0.1 ? "under 0.1" : share.toFixed(1)} %), marked in magenta.`;
  return (
    <section class="visual-diff" aria-labelledby="visual-diff-title" data-changed-pixels={compared.changed}>
      <h3 id="visual-diff-title">
        The document: version {from} and version {to}
      </h3>
      <p role="status">{summary}</p>
      <div class="panes">
        <figure>
          <img src={compared.before} alt={`Preview of version ${from}`} />
          <figcaption>Version {from}</figcaption>
        </figure>
        <figure>
          <img src={compared.after} alt={`Preview of version ${to}`} />
          <figcaption>Version {to}</figcaption>
        </figure>
        <figure>
          <canvas ref={canvas} role="img" aria-label={`The pixels that changed from version ${from} to version ${to}: ${summary}`} />
          <figcaption>Changes</figcaption>
        </figure>
      </div>
    </section>
  );
}
