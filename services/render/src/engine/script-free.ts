/**
 * Whether a document may run with script turned off and, once rendered, be written over by its
 * key's next such document instead of getting a new one (see README.md, "Script-free documents").
 *
 * The engine does not trust this answer for safety: a document it deems script-free runs with
 * script execution off (`Emulation.setScriptExecutionDisabled`), so a construct this misses
 * cannot run. What the answer decides is correctness, so it errs towards "no":
 *
 * - anything that runs or would run script: `<script>`, an event handler attribute (a name
 *   starting "on" with a value, after whatever may end a tag name or an attribute), a
 *   `javascript:` URL, a frame, an object, an embed;
 * - anything that renders differently with script off: `<noscript>`, CSS's `scripting` media
 *   feature;
 * - what a document's markup leaves on its Document, which writing the next document over it
 *   would keep: `<meta http-equiv>` (a Content-Security-Policy among them, tested) and a
 *   referrer policy.
 *
 * Each test is a case-insensitive substring or pattern over the whole source, so text that only
 * mentions one of these (a paragraph about "referrers") costs that document the reuse, nothing more.
 */
const DISQUALIFYING = [
  /<(script|noscript|iframe|frame|object|embed|applet|portal|fencedframe)/i,
  /[\s"'/]on[a-z]+\s*=/i,
  /javascript:/i,
  /scripting/i,
  /http-equiv/i,
  /referrer/i,
];

export function isScriptFree(html: string): boolean {
  return !DISQUALIFYING.some((pattern) => pattern.test(html));
}
