import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { datedTemplate } from "./header-date";

describe("the header's and footer's date in the request's locale and time zone", () => {
  const at = new Date("2026-11-28T20:00:00Z");

  it("fills each element of class date with the day in the locale and zone, under a class Chromium leaves alone", () => {
    const html = `<div class="row"><span class="date"></span> · <b class='big date'></b> · <span class="pageNumber"></span></div>`;
    assert.equal(
      datedTemplate(html, { locale: "de-DE", timeZone: "Pacific/Kiritimati" }, at),
      `<div class="row"><span class="pressroom-date">29.11.26</span> · <b class='big pressroom-date'>29.11.26</b> · <span class="pageNumber"></span></div>`,
    );
    assert.match(datedTemplate(`<span class="date"></span>`, { timeZone: "Pacific/Pago_Pago" }, at), />11\/28\/26</, "en-US, as Chromium's");
    assert.match(datedTemplate(`<span class="date"></span>`, { locale: "ja-JP" }, at), />2026\/11\/2[89]</);
  });

  it("leaves the template to Chromium when the request names neither, and other classes alone", () => {
    const html = `<span class="date"></span><span class="dates update"></span>`;
    assert.equal(datedTemplate(html, {}, at), html);
    assert.equal(datedTemplate(`<span class="dates update"></span>`, { locale: "de-DE" }, at), `<span class="dates update"></span>`);
  });
});
