import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { descendantsOf, freePort, REPO_ROOT, startTestStack, stopChild, waitFor, type TestStack } from "@pressroom/stack";
import { startHarness, type Harness } from "./test-support/harness";
import { pdfText } from "./test-support/pdf";

/**
 * Issue 30, item 2: Chromium holds no secret; issue 39, item 3: nor does the process that
 * parses what it prints. A real render worker, with real
 * credentials (its database URL, its NATS user and password) and more planted
 * in its environment; every Chromium process it runs, or that runs for it,
 * is read from /proc: none of them was given any of it.
 */

/** Names no Chromium process may carry: what a renderer exploit would read from /proc/self/environ. */
const FORBIDDEN_NAME = /^DATABASE_URL$|^NATS_|_SECRET|_KEY$|PASSWORD/;

/** Credentials planted in the worker's environment, beside the real ones the stack gives it. */
const planted = (): Record<string, string> => ({
  STRIPE_SECRET_KEY: `sk_test_${randomBytes(8).toString("hex")}`,
  OUTPUT_SIGNING_SECRET: randomBytes(16).toString("hex"),
  WEBHOOK_SECRET_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  PGPASSWORD: `pg-${randomBytes(8).toString("hex")}`,
  RENDER_API_KEY: `pr_live_${randomBytes(12).toString("hex")}`,
});

interface ProcessInfo {
  pid: number;
  uid: number;
  args: string[];
  env: Record<string, string>;
}

function processInfo(pid: number): ProcessInfo | undefined {
  try {
    const split = (file: string) => readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0").filter(Boolean);
    const env = Object.fromEntries(
      split("environ").flatMap((entry) => {
        const at = entry.indexOf("=");
        return at > 0 ? [[entry.slice(0, at), entry.slice(at + 1)]] : [];
      }),
    );
    // Chromium's zygote children rewrite their title over argv (one string, spaces between the words).
    const args = split("cmdline").flatMap((arg, i, all) => (all.length === 1 ? arg.split(" ") : [arg]));
    return { pid, uid: statSync(`/proc/${pid}`).uid, args, env };
  } catch {
    return undefined; // gone meanwhile
  }
}

const isChromium = (p: ProcessInfo): boolean => /chromium|chrome/.test(path.basename(p.args[0] ?? ""));

/** Every Chromium process on the machine whose process tree starts at one of `roots`. */
function chromiumUnder(roots: number[]): ProcessInfo[] {
  return roots
    .flatMap((root) => descendantsOf(root))
    .map(processInfo)
    .filter((p): p is ProcessInfo => p !== undefined && isChromium(p));
}

/** What a Chromium process was given that it must not have: forbidden names, or the value of any credential. */
function leaksOf(processes: ProcessInfo[], secrets: string[]): string[] {
  return processes.flatMap((p) => [
    ...Object.keys(p.env)
      .filter((name) => FORBIDDEN_NAME.test(name))
      .map((name) => `pid ${p.pid} has ${name}`),
    ...secrets.filter((secret) => Object.values(p.env).some((value) => value.includes(secret))).map(() => `pid ${p.pid} holds a credential's value`),
  ]);
}

function assertHoldsNothing(processes: ProcessInfo[], secrets: string[]): void {
  const browser = processes.find((p) => !p.args.some((a) => a.startsWith("--type=")));
  assert.ok(browser, "no Chromium browser process");
  assert.ok(
    processes.some((p) => p.args.includes("--type=renderer")),
    "no renderer: the warm pages have none",
  );
  // The control: the environment was read, and it is Chromium's own.
  assert.ok(browser.env.PATH, "the browser's environment was not read");
  assert.match(browser.env.HOME ?? "", /pressroom-chromium-/, "Chromium's HOME is its own profile directory");
  assert.deepEqual(leaksOf(processes, secrets), []);
}

const credentialsOf = (stack: TestStack, extra: Record<string, string>): string[] => [
  stack.databaseUrl,
  stack.databaseUrls.render,
  ...Object.values(stack.natsPasswords ?? {}),
  ...Object.values(extra),
];

describe("a Chromium launched by the render worker", () => {
  const extra = planted();
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({ only: ["render"], natsUsers: true, serviceEnv: { render: extra } });
  });
  after(async () => {
    await stack?.stop();
  });

  it("the worker itself holds the credentials (the control)", () => {
    const worker = processInfo(stack.services.processes.get("render")!.child.pid!)!;
    assert.equal(worker.env.DATABASE_URL, stack.databaseUrls.render);
    assert.equal(worker.env.NATS_USER, "render");
    assert.ok(worker.env.NATS_PASSWORD);
    assert.equal(worker.env.STRIPE_SECRET_KEY, extra.STRIPE_SECRET_KEY);
    assert.notDeepEqual(leaksOf([worker], credentialsOf(stack, extra)), []);
  });

  it("gets none of them: no DATABASE_URL, NATS_*, *_SECRET*, *_KEY or *PASSWORD*, in any of its processes", () => {
    const processes = chromiumUnder([stack.services.processes.get("render")!.child.pid!]);
    assertHoldsNothing(processes, credentialsOf(stack, extra));
  });

  it("nor does the post-processing process that parses its PDFs: an allow-listed environment, no socket but its own server's, no gRPC key it can read (issue 39)", async () => {
    const worker = stack.services.processes.get("render")!.child.pid!;
    const postprocess = () =>
      descendantsOf(worker)
        .map(processInfo)
        .find((p) => p?.args.some((a) => a.endsWith("postprocess-main.js")));
    // Its TCP sockets: its server's listening socket and the worker's connections to it, nothing inherited (NATS, PostgreSQL).
    const tcpOf = (pid: number) => {
      const sockets = new Set(readdirSync(`/proc/${pid}/fd`).flatMap((fd) => /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.slice(1) ?? []));
      return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .slice(1)
          .map((line) => line.trim().split(/\s+/))
          .filter((f) => f.length > 9 && sockets.has(f[9]!))
          .map((f) => ({ local: f[1]!, state: f[3]! })),
      );
    };
    await waitFor(
      "the worker's post-processing process to listen",
      async () => {
        const found = postprocess();
        return found !== undefined && tcpOf(found.pid).some((s) => s.state === "0A");
      },
      60_000,
    );
    const found = postprocess()!;
    assert.ok(found.env.PATH, "its environment was not read");
    assert.deepEqual(
      Object.keys(found.env).filter((name) => !["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "LOG_LEVEL", "RENDER_POSTPROCESS_PORT"].includes(name)),
      [],
    );
    assert.deepEqual(leaksOf([found], credentialsOf(stack, extra)), []);
    const tcp = tcpOf(found.pid);
    const listening = tcp.filter((s) => s.state === "0A").map((s) => s.local);
    assert.equal(listening.length, 1, `one listening socket: ${JSON.stringify(tcp)}`);
    assert.match(listening[0]!, /^0100007F:/, "it listens on 127.0.0.1");
    const port = listening[0]!.split(":")[1];
    assert.deepEqual(
      tcp.filter((s) => s.local.split(":")[1] !== port),
      [],
      "a socket that is not its own server's",
    );
    if (process.getuid?.() === 0) {
      assert.equal(found.uid, 65534, "a worker running as root starts it as nobody");
      const read = spawnSync("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "cat", stack.certificates.render.key], { encoding: "utf8" });
      assert.notEqual(read.status, 0, "nobody can read the worker's gRPC key");
      assert.doesNotMatch(read.stdout, /PRIVATE KEY/);
    }
  });
});

/**
 * The chart's layout, locally: Chromium run by `dist/chromium-main.js` as
 * another user (nobody), its DevTools endpoint on loopback, and a render
 * worker that connects to it (RENDER_CHROMIUM_URL) instead of launching one.
 */
describe("a Chromium of its own, as another user, that the worker connects to", () => {
  const extra = planted();
  const asRoot = process.getuid?.() === 0;
  let h: Harness;
  let port: number;
  let host: ChildProcess | undefined;
  let key: string;

  /** chromium-main.js under setpriv (another uid, no groups); its own environment carries the planted credentials too. */
  const startHost = (): ChildProcess => {
    const entry = path.join(REPO_ROOT, "services", "render", "dist", "chromium-main.js");
    const command = asRoot ? ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, entry] : [process.execPath, entry];
    const child = spawn(command[0]!, command.slice(1), {
      env: { PATH: process.env.PATH, LOG_LEVEL: "warn", RENDER_CHROMIUM_PORT: String(port), ...extra },
      stdio: ["ignore", "ignore", "inherit"],
    });
    host = child;
    return child;
  };
  const worker = () => h.stack.services.processes.get("render")!.child;
  const readyz = async () => (await fetch(`http://127.0.0.1:${h.stack.ports.health.render}/readyz`)).status;
  const renderText = async (text: string): Promise<string> => {
    const response = await h.api.post("/v1/render", { html: "<p>{{text}}</p>", data: { text } }, { key });
    assert.equal(response.status, 200, response.text);
    return pdfText((await h.api.download((response.json as { url: string }).url)).body);
  };

  before(async () => {
    port = await freePort();
    // The worker starts first and waits for its Chromium, as in a pod whose containers start together.
    const starting = startHarness({ natsUsers: true, serviceEnv: { render: { ...extra, RENDER_CHROMIUM_URL: `http://127.0.0.1:${port}` } } });
    startHost();
    h = await starting;
    ({ apiKey: key } = await h.admin.createKey("business"));
  });
  after(async () => {
    await h?.stop();
    if (host) await stopChild(host, "SIGTERM", 5_000);
  });

  it("renders documents through it", async () => {
    assert.match(await renderText("through the loopback"), /through the loopback/);
  });

  it("the worker runs no Chromium; Chromium runs as another user and holds no credential", () => {
    assert.deepEqual(chromiumUnder([worker().pid!]), [], "the worker launched a Chromium of its own");
    const processes = chromiumUnder([host!.pid!]);
    if (asRoot) assert.deepEqual([...new Set(processes.map((p) => p.uid))], [65534], "Chromium runs as nobody");
    assertHoldsNothing(processes, [...credentialsOf(h.stack, extra)]);
  });

  it("its DevTools endpoint listens on loopback only", () => {
    const listening = ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .slice(1)
        .map((line) => line.trim().split(/\s+/))
        .filter((f) => f.length > 3 && f[3] === "0A" && parseInt(f[1]!.split(":")[1]!, 16) === port)
        .map((f) => f[1]!.split(":")[0]!),
    );
    assert.deepEqual(listening, ["0100007F"], "one listener, on 127.0.0.1");
  });

  it("when that Chromium goes away the worker is not ready; when it is back the worker reconnects and renders", async () => {
    await stopChild(host!, "SIGTERM", 5_000);
    await waitFor("the worker to report not ready", async () => (await readyz()) === 503, 30_000);
    startHost();
    await waitFor("the worker to reconnect", async () => (await readyz()) === 200, 60_000);
    assert.equal(worker().exitCode, null, "the worker kept running");
    assert.match(await renderText("after the restart"), /after the restart/);
  });

  it("when Chromium itself dies, chromium-main exits non-zero instead of relaunching it (the kubelet restarts the container); started again, the worker reconnects (issue 39)", async () => {
    const browser = chromiumUnder([host!.pid!]).find((p) => !p.args.some((a) => a.startsWith("--type=")));
    assert.ok(browser, "no Chromium browser process under chromium-main");
    const exited = new Promise<number | null>((resolve) => host!.once("exit", (code) => resolve(code)));
    process.kill(browser.pid, "SIGKILL");
    assert.equal(await exited, 70, "chromium-main exits with its own code, not 0 and not by a signal");
    await waitFor("the worker to report not ready", async () => (await readyz()) === 503, 30_000);
    startHost();
    await waitFor("the worker to reconnect", async () => (await readyz()) === 200, 60_000);
    assert.match(await renderText("after the crash"), /after the crash/);
  });
});
