import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isScriptFree } from "./script-free";

/** Asserts that each source is classified `scriptFree`, naming the one that is not. */
function classifies(sources: string[], scriptFree: boolean): void {
  for (const html of sources) assert.equal(isScriptFree(html), scriptFree, html);
}

describe("script-free documents: which the engine runs with script off", () => {
  it("takes plain markup, styles, SVG, data: and http(s) images, forms and a <base>", () => {
    classifies(
      [
        "<p>hello</p>",
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>t</title><style>p { color: red } @media print { p { color: black } }</style></head><body><p>x</p></body></html>',
        '<svg width="10" height="10"><rect width="10" height="10" fill="#123"/><animate attributeName="x" from="0" to="5" dur="1s"/></svg>',
        '<img src="data:image/png;base64,AAAA"><img src="https://example.com/logo.png" alt="logo"><a href="https://example.com/">link</a>',
        '<form><input name="q" value="v"><input type="checkbox" checked><textarea>t</textarea><select><option selected>1</option></select></form>',
        '<head><base href="https://example.com/"></head><p>relative</p>',
        "<p>Conditions: the donation is non-refundable. Button = 1 on the form.</p>",
      ],
      true,
    );
  });

  it("refuses anything that runs script, in any spelling the HTML parser accepts", () => {
    classifies(
      [
        "<script>1</script>",
        "<SCRIPT src=x></SCRIPT>",
        "<svg><script>1</script></svg>",
        "<img src=x onerror=alert(1)>",
        "<img src=x ONERROR = alert(1)>",
        "<body/onload=alert(1)>",
        '<img src="x"onerror="alert(1)">',
        "<img src='x'onerror='alert(1)'>",
        "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
        "<div\tonclick=x>",
        '<a href="javascript:alert(1)">a</a>',
        '<a href="JaVaScRiPt:alert(1)">a</a>',
        '<iframe src="https://example.com/"></iframe>',
        '<iframe srcdoc="<p>x</p>"></iframe>',
        "<frameset><frame src=x></frameset>",
        '<object data="x.svg"></object>',
        '<embed src="x.svg">',
      ],
      false,
    );
  });

  it("refuses what renders differently with script off", () => {
    assert.equal(isScriptFree("<noscript>enable JavaScript</noscript>"), false);
    assert.equal(isScriptFree("<style>@media (scripting: none) { p { display: none } }</style>"), false);
  });

  it("refuses markup that leaves state on its Document: <meta http-equiv>, a referrer policy", () => {
    assert.equal(isScriptFree(`<meta http-equiv="Content-Security-Policy" content="img-src 'none'">`), false);
    assert.equal(isScriptFree('<meta/HTTP-EQUIV="refresh" content="0">'), false);
    assert.equal(isScriptFree('<meta name="referrer" content="no-referrer">'), false);
    assert.equal(isScriptFree('<img referrerpolicy="no-referrer" src="x.png">'), false);
  });
});
