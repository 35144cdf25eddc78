import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as dns from "node:dns";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { createGuardedAgent, createGuardedHttpAgent, NetGuardError, type LookupAllFunction } from "./index";

const BODY = "hello from the loopback server";

/** GET url through agent; resolves with the body or rejects with the request's error. */
function get(url: string, agent: http.Agent, extra: https.RequestOptions = {}): Promise<string> {
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { agent, ...extra }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve(body));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(5000, () => req.destroy(new Error("timed out")));
  });
}

async function rejectsWithGuard(promise: Promise<unknown>, check?: (err: NetGuardError) => void): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof NetGuardError, `expected NetGuardError, got ${String(err)}`);
    check?.(err);
    return true;
  });
}

describe("createGuardedAgent (real https server on 127.0.0.1)", () => {
  let dir: string;
  let cert: string;
  let server: https.Server;
  let port: number;
  let connections = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "netguard-"));
    const key = join(dir, "k");
    const crt = join(dir, "c");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-days",
        "1",
        "-keyout",
        key,
        "-out",
        crt,
      ],
      { stdio: "ignore" },
    );
    cert = readFileSync(crt, "utf8");
    server = https.createServer({ key: readFileSync(key), cert }, (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(BODY);
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses https://localhost/ by default, without connecting", async () => {
    const before = connections;
    const agent = createGuardedAgent();
    await rejectsWithGuard(get(`https://localhost:${port}/`, agent), (err) => {
      assert.equal(err.hostname, "localhost");
      assert.equal(err.kind, "loopback");
    });
    assert.equal(connections, before);
    agent.destroy();
  });

  it("refuses IP-literal hosts (Node does not call lookup for them)", async () => {
    const before = connections;
    const agent = createGuardedAgent();
    await rejectsWithGuard(get(`https://127.0.0.1:${port}/`, agent), (err) => {
      assert.equal(err.kind, "loopback");
      assert.equal(err.message, 'host "127.0.0.1" is a loopback address');
    });
    await rejectsWithGuard(get(`https://[::1]:${port}/`, agent), (err) => assert.equal(err.kind, "loopback"));
    await rejectsWithGuard(get(`https://[::ffff:127.0.0.1]:${port}/`, agent), (err) => assert.equal(err.kind, "loopback"));
    await rejectsWithGuard(get(`https://169.254.169.254/latest/meta-data/`, agent), (err) => assert.equal(err.reason, "cloud metadata"));
    assert.equal(connections, before);
    agent.destroy();
  });

  it("is not bypassed by a per-request lookup, hostname option or socketPath", async () => {
    const before = connections;
    const agent = createGuardedAgent();
    await rejectsWithGuard(get(`https://localhost:${port}/`, agent, { lookup: dns.lookup }));
    await rejectsWithGuard(get(`https://example.invalid:${port}/`, agent, { hostname: "127.0.0.1" }));
    await rejectsWithGuard(get(`https://localhost:${port}/`, agent, { socketPath: "/tmp/x.sock" }), (err) => assert.match(err.message, /Unix socket/));
    assert.equal(connections, before);
    agent.destroy();
  });

  it("refuses a name whose answers mix public and loopback addresses", async () => {
    const lookup: LookupAllFunction = (_h, _o, cb) =>
      setImmediate(() =>
        cb(null, [
          { address: "1.1.1.1", family: 4 },
          { address: "127.0.0.1", family: 4 },
        ]),
      );
    const agent = createGuardedAgent({ lookup, label: "webhook host" });
    await rejectsWithGuard(get(`https://rebind.test:${port}/`, agent), (err) =>
      assert.equal(err.message, 'webhook host "rebind.test" resolves to a loopback address (127.0.0.1)'),
    );
    agent.destroy();
  });

  it("connects with { allowLoopback: true, ca: cert }, by name and by IP", async () => {
    const agent = createGuardedAgent({ allowLoopback: true, ca: cert });
    assert.equal(await get(`https://localhost:${port}/`, agent), BODY);
    assert.equal(await get(`https://127.0.0.1:${port}/`, agent), BODY);
    agent.destroy();
  });

  it("still verifies certificates: allowLoopback without the ca fails TLS", async () => {
    const agent = createGuardedAgent({ allowLoopback: true });
    await assert.rejects(get(`https://localhost:${port}/`, agent), (err: NodeJS.ErrnoException) => {
      assert.ok(!(err instanceof NetGuardError));
      assert.match(String(err.code), /SELF_SIGNED|UNABLE_TO_VERIFY/);
      return true;
    });
    agent.destroy();
  });

  it("adds the ca to the default roots rather than replacing them", () => {
    const agent = createGuardedAgent({ ca: cert });
    const ca = agent.options.ca as (string | Buffer)[];
    assert.equal(ca.length, tls.rootCertificates.length + 1);
    assert.equal(ca[ca.length - 1], cert);
    assert.equal(createGuardedAgent().options.ca, undefined);
  });

  it("pins the connection to the checked address (one resolution per connection)", async () => {
    const asked: string[] = [];
    // A name under the attacker's control that would rebind on a second lookup.
    let answer = "127.0.0.1";
    const lookup: LookupAllFunction = (hostname, _o, cb) => {
      asked.push(hostname);
      const address = answer;
      answer = "10.0.0.1";
      setImmediate(() => cb(null, [{ address, family: 4 }]));
    };
    const agent = createGuardedAgent({ allowLoopback: true, ca: cert, lookup });
    // servername keeps SNI/verification on "localhost" while the name is pinned.test.
    assert.equal(await get(`https://pinned.test:${port}/`, agent, { servername: "localhost", headers: { host: "localhost" } }), BODY);
    assert.deepEqual(asked, ["pinned.test"]);
    agent.destroy();
  });
});

describe("createGuardedHttpAgent (real http server on 127.0.0.1)", () => {
  let server: http.Server;
  let port: number;

  before(async () => {
    server = http.createServer((_req, res) => res.end(BODY));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("applies the same guard to plain http", async () => {
    const agent = createGuardedHttpAgent();
    await rejectsWithGuard(get(`http://localhost:${port}/`, agent));
    await rejectsWithGuard(get(`http://127.0.0.1:${port}/`, agent));
    agent.destroy();
    const open = createGuardedHttpAgent({ allowLoopback: true });
    assert.equal(await get(`http://localhost:${port}/`, open), BODY);
    assert.equal(await get(`http://127.0.0.1:${port}/`, open), BODY);
    open.destroy();
  });

  it("survives a keep-alive request destroyed from its response's last chunk, and keeps serving", async () => {
    // Node's http client leaves the socket without an 'error' listener for a tick here: without the
    // agent's own, the destroy's error is an uncaught exception, which fails this test.
    const agent = createGuardedHttpAgent({ allowLoopback: true, keepAlive: true });
    for (let round = 0; round < 5; round++) {
      await new Promise<void>((resolve) => {
        const request = http.get(`http://127.0.0.1:${port}/`, { agent }, (response) => {
          response.on("data", () => request.destroy(new Error("refused by the reader")));
        });
        request.on("error", () => undefined);
        request.on("close", () => setImmediate(resolve));
      });
    }
    assert.equal(await get(`http://127.0.0.1:${port}/`, agent), BODY);
    agent.destroy();
  });
});
