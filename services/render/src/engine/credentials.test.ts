import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pageCredentials, withCredentials } from "./credentials";

describe("url source credentials", () => {
  const credentials = pageCredentials("https://reports.example.com/q3?x=1", {
    headers: { "X-Token": "t0k3n", Accept: "text/html" },
    cookies: [
      { name: "session", value: "abc" },
      { name: "scoped", value: "only-reports", path: "/reports" },
    ],
    basicAuth: { username: "ada", password: "pä:ss" },
    userAgent: "ReportBot/1.0",
  })!;

  it("are sent to the url's own origin: headers replacing the page's, basic auth, user agent, cookies after the page's own", () => {
    const sent = withCredentials(
      new URL("https://reports.example.com/reports/q3.css"),
      { accept: "*/*", "user-agent": "Chromium", Cookie: "from=page", "Accept-Encoding": "gzip" },
      credentials,
    );
    assert.deepEqual(sent, {
      "Accept-Encoding": "gzip",
      "X-Token": "t0k3n",
      Accept: "text/html",
      Authorization: `Basic ${Buffer.from("ada:pä:ss").toString("base64")}`,
      "User-Agent": "ReportBot/1.0",
      Cookie: "from=page; session=abc; scoped=only-reports",
    });
  });

  it("scope each cookie to its path", () => {
    const cookie = (path: string) => withCredentials(new URL(`https://reports.example.com${path}`), {}, credentials).Cookie;
    assert.equal(cookie("/"), "session=abc");
    assert.equal(cookie("/reportsX"), "session=abc");
    assert.equal(cookie("/reports"), "session=abc; scoped=only-reports");
    assert.equal(cookie("/reports/a/b"), "session=abc; scoped=only-reports");
  });

  it("are never sent to another origin: another host, scheme or port", () => {
    const headers = { accept: "*/*" };
    for (const other of ["https://cdn.example.com/a.css", "http://reports.example.com/", "https://reports.example.com:8443/", "https://example.com/"]) {
      assert.deepEqual(withCredentials(new URL(other), headers, credentials), headers, other);
    }
    assert.deepEqual(
      withCredentials(new URL("https://reports.example.com:443/x"), {}, credentials).Cookie,
      "session=abc",
      "the default port is the same origin",
    );
  });

  it("are none without url options", () => {
    assert.equal(pageCredentials("https://example.com/", undefined), undefined);
    assert.equal(pageCredentials("https://example.com/", { headers: {}, cookies: [] }), undefined);
  });
});
