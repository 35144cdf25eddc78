import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { selfSignedCert } from "../test-support/tls";
import { createPoster } from "./http";

interface Seen {
  path: string;
  host: string | undefined;
  body: string;
}

describe("callback HTTP client", () => {
  // Valid for hooks.example.com too, so that only the port can keep a callback to that name from this receiver.
  const tls = selfSignedCert(["hooks.example.com"]);
  const seen: Seen[] = [];
  let server: Server;
  let port: number;

  before(async () => {
    server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        seen.push({ path: req.url ?? "", host: req.headers.host, body });
        const path = (req.url ?? "").split("?")[0];
        if (path === "/ok") res.writeHead(204).end();
        else if (path === "/redirect") res.writeHead(302, { location: "https://127.0.0.1/elsewhere" }).end();
        else if (path === "/busy") res.writeHead(503, { "retry-after": "7" }).end("busy");
        else if (path === "/slow") setTimeout(() => res.writeHead(200).end(), 6_000).unref();
        else res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const devPoster = () => createPoster({ timeoutMs: 3_000, allowLoopback: true, ca: tls.cert, devTargetPort: port });

  it("by default refuses loopback targets before connecting", async () => {
    const before = seen.length;
    const poster = createPoster({ timeoutMs: 1_000, ca: tls.cert, devTargetPort: port });
    const result = await poster.post("https://127.0.0.1/ok", "{}", {});
    poster.close();
    assert.equal(result.status, 0);
    assert.equal(result.permanent, true);
    assert.match(result.error ?? "", /loopback/);
    assert.equal(seen.length, before, "no request reached the receiver");
  });

  it("refuses a host name when any of its addresses is private, link-local or the metadata address", async () => {
    for (const addresses of [["10.0.0.7"], ["93.184.215.14", "192.168.1.1"], ["169.254.169.254"], ["::ffff:127.0.0.1"], ["fd00::1"], ["100.64.0.1"]]) {
      const lookup = (_host: string, _options: unknown, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) =>
        callback(
          null,
          addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
        );
      const poster = createPoster({ timeoutMs: 1_000, lookup });
      const result = await poster.post("https://hooks.example.com/in", "{}", {});
      poster.close();
      assert.equal(result.status, 0, addresses.join(","));
      assert.equal(result.permanent, true, addresses.join(","));
      assert.doesNotMatch(result.error ?? "", /\/in/, "the error never shows the URL's path");
    }
  });

  it("uses the test port only for a loopback host: another name keeps port 443", async () => {
    const before = seen.length;
    const lookup = (_host: string, _options: unknown, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) =>
      callback(null, [{ address: "127.0.0.1", family: 4 }]);
    const poster = createPoster({ timeoutMs: 3_000, allowLoopback: true, ca: tls.cert, devTargetPort: port, lookup });
    const result = await poster.post("https://hooks.example.com/ok", "{}", {});
    poster.close();
    assert.equal(result.status, 0, "port 443 of 127.0.0.1: nothing listens there");
    assert.equal(seen.length, before, "the test receiver was not called");
  });

  it("posts the body with the URL's own Host when the test port is in use", async () => {
    const poster = devPoster();
    const result = await poster.post("https://127.0.0.1/ok?token=abc", '{"a":1}', { "Content-Type": "application/json" });
    poster.close();
    assert.deepEqual(result, { status: 204 });
    const last = seen.at(-1)!;
    assert.equal(last.path, "/ok?token=abc");
    assert.equal(last.host, "127.0.0.1");
    assert.equal(last.body, '{"a":1}');
  });

  it("does not follow redirects", async () => {
    const poster = devPoster();
    const result = await poster.post("https://127.0.0.1/redirect", "{}", {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    poster.close();
    assert.equal(result.status, 302);
    assert.ok(!seen.some((s) => s.path === "/elsewhere"));
  });

  it("reports Retry-After, and a timeout as no response", async () => {
    const poster = devPoster();
    assert.deepEqual(await poster.post("https://127.0.0.1/busy", "{}", {}), { status: 503, retryAfter: "7" });
    const slow = await poster.post("https://127.0.0.1/slow", "{}", {});
    poster.close();
    assert.equal(slow.status, 0);
    assert.equal(slow.permanent, false);
    assert.match(slow.error ?? "", /no response within 3 s/);
  });

  it("does not trust an unknown CA", async () => {
    const poster = createPoster({ timeoutMs: 3_000, allowLoopback: true, devTargetPort: port });
    const result = await poster.post("https://127.0.0.1/ok", "{}", {});
    poster.close();
    assert.equal(result.status, 0);
    assert.match(result.error ?? "", /self.signed|certificate/i);
  });

  it("re-checks the URL by the acceptance rules before calling: https, default port, no credentials", async () => {
    const poster = createPoster({ timeoutMs: 3_000, allowLoopback: true, devTargetPort: port });
    try {
      for (const [url, problem] of [
        ["http://127.0.0.1/ok", /^webhook_url: must use https$/],
        ["https://127.0.0.1:8443/ok", /default port/],
        ["https://u:p@127.0.0.1/ok", /credentials/],
        ["no-scheme.example.com/ok", /not a valid absolute URL/],
      ] as const) {
        const result = await poster.post(url, "{}", {});
        assert.equal(result.status, 0, url);
        assert.equal(result.permanent, true, url);
        assert.match(result.error ?? "", problem, url);
      }
    } finally {
      poster.close();
    }
  });
});
