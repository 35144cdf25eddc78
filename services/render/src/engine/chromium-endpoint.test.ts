import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { chromiumEnv, connectChromium, DEFAULT_CHROMIUM_PATH, makeProfileDir, remoteChromiumArgs } from "./chromium";
import { RenderEngine } from "./engine";

/**
 * The worker drives only the Chromium it was pointed at (issue 39): a real Chromium with its
 * DevTools endpoint on loopback, and something else on another port that answers /json/version
 * naming that Chromium's endpoint (what a process squatting the port, or a browser bent to it,
 * would answer): the worker connects to the first and refuses the second.
 */
describe("connectChromium checks the endpoint's host and port", () => {
  let chromium: ChildProcess;
  let profile: string;
  let port: number;
  let impostor: Server;
  const settings = { executablePath: DEFAULT_CHROMIUM_PATH, sandbox: false, rendererHeapMiB: 256, processMemoryMiB: 2048, protocolTimeoutMs: 10_000 };

  const freePort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port: free } = server.address() as AddressInfo;
        server.close(() => resolve(free));
      });
    });
  /** Serves /json/version with this answer. */
  const answering = (body: () => unknown) =>
    new Promise<Server>((resolve) => {
      const server = createServer((_req, res) => res.setHeader("content-type", "application/json").end(JSON.stringify(body()))).listen(0, "127.0.0.1", () =>
        resolve(server),
      );
    });
  const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  before(async () => {
    port = await freePort();
    profile = makeProfileDir();
    chromium = spawn(DEFAULT_CHROMIUM_PATH, remoteChromiumArgs({ sandbox: false, rendererHeapMiB: 256 }, profile, port), {
      env: chromiumEnv(profile),
      stdio: "ignore",
    });
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/json/version`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const real = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as { webSocketDebuggerUrl: string };
    impostor = await answering(() => ({ webSocketDebuggerUrl: real.webSocketDebuggerUrl }));
  });
  after(() => {
    impostor?.close();
    chromium?.kill("SIGKILL");
    rmSync(profile, { recursive: true, force: true });
  });

  it("connects to the Chromium at the address it was given", async () => {
    const browser = await connectChromium({ ...settings, connectUrl: `http://127.0.0.1:${port}` });
    assert.match(await browser.version(), /Chrome|Chromium/);
    await browser.disconnect();
  });

  it("refuses an answer naming a DevTools endpoint on another port or host, or no endpoint", async () => {
    await assert.rejects(connectChromium({ ...settings, connectUrl: urlOf(impostor) }), /named a DevTools endpoint elsewhere/, "another port");
    for (const webSocketDebuggerUrl of [`ws://10.0.0.1:${port}/devtools/browser/x`, `wss://127.0.0.1:${port}/devtools/browser/x`, 42, undefined]) {
      const server = await answering(() => ({ webSocketDebuggerUrl }));
      try {
        await assert.rejects(connectChromium({ ...settings, connectUrl: urlOf(server) }), /named a DevTools endpoint elsewhere/, String(webSocketDebuggerUrl));
      } finally {
        server.close();
      }
    }
  });

  it("the engine reports whether the browser it drives runs sandboxed, from the browser's own command line (here: --no-sandbox)", async () => {
    const engine = await RenderEngine.start({ executablePath: DEFAULT_CHROMIUM_PATH, slots: 1, connectUrl: `http://127.0.0.1:${port}` });
    try {
      assert.equal(engine.stats().sandboxed, false);
    } finally {
      await engine.close();
    }
  });
});
