import { imageUrl } from "../api";

/**
 * The editor's preview, in one place. Today it is the stored preview of the version being edited
 * (GET /v1/templates/{id}/preview.png, rendered when the version was saved), shown beside the
 * draft and again after each save. The live preview of an unsaved draft needs POST
 * /v1/templates/preview (a draft rendered and counted like any preview), which the gateway does
 * not serve yet: once it does, this function posts the draft to it, and the editor calls it as
 * the user types (debounced), with nothing else to change.
 */
export async function previewOf(saved: { id: string; version: number } | undefined): Promise<{ url: string; caption: string } | undefined> {
  if (!saved) return undefined;
  return {
    url: await imageUrl(`/v1/templates/${encodeURIComponent(saved.id)}/preview.png?v=${saved.version}`),
    caption: `Version ${saved.version} as saved, rendered with its sample data.`,
  };
}
