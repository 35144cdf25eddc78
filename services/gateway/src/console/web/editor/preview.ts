import { imageUrl, postForImage } from "../api";

/** How long the editor waits after the last change before it renders the draft: a pause in typing, not every keystroke. */
export const LIVE_PREVIEW_DELAY_MS = 700;

/**
 * The previews the console shows, in one place. A draft's (the editor's live preview) is POST
 * /v1/templates/preview: the unsaved template rendered with its sample data, admitted and counted
 * like any preview, stored nowhere. A saved version's is its own stored preview, read for free.
 */
export function draftPreview(body: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  return postForImage("/v1/templates/preview", body, signal);
}

/** The stored preview of one version of an own template (GET /v1/templates/{id}/versions/{n}/preview.png), as an object URL. */
export function versionPreview(id: string, version: number): Promise<string> {
  return imageUrl(`/v1/templates/${encodeURIComponent(id)}/versions/${version}/preview.png`);
}
