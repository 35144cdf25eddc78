import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { chromiumArgs } from "@pressroom/render/engine";
import { descendantsOf } from "@pressroom/stack";
import type { BenchDocument } from "./documents";
import { drive, type RunStats } from "./stats";

/**
 * jsreport 4.7, the last line that runs on Node 20. Installed from the npm
 * registry into a cache outside the repository at the first run, without
 * puppeteer's own browser download: it is given the same Chromium binary.
 * puppeteer is chrome-pdf's peer dependency (">=21.1.x"), which npm would
 * otherwise fill with whatever is newest that day: pinned to the version of
 * the floor's puppeteer-core.
 */
const PACKAGES = ["@jsreport/jsreport-core@4.7.1", "@jsreport/jsreport-chrome-pdf@4.3.0", "@jsreport/jsreport-express@4.2.3", "puppeteer@24.43.1"];
const HOME = path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"), "pressroom-bench", "jsreport-4.7.1");
const INSTALLED = path.join(HOME, ".installed");
const READY = "jsreport ready";

/**
 * Its server: the HTTP API, the chrome-pdf and chrome-image recipes, nothing stored. jsreport renders
 * each request in one of its worker threads, and each thread keeps its own chrome-pool: the pool's
 * numberOfWorkers is per thread, so one browser per thread makes one Chromium per concurrent request
 * (a new page in it per render). numberOfWorkers equal to the threads would start their square
 * (16 browsers at c=4, measured), most of them launched during the timed renders.
 */
const START_SCRIPT = `const settings = JSON.parse(process.env.JSREPORT_BENCH);
const jsreport = require("@jsreport/jsreport-core")({
  extensions: {
    express: { httpPort: settings.port },
    "chrome-pdf": { strategy: "chrome-pool", numberOfWorkers: 1, launchOptions: { executablePath: settings.chromium, args: settings.args } },
  },
  workers: { numberOfWorkers: settings.workers },
  reportTimeout: 60000,
  store: { provider: "memory" },
  blobStorage: { provider: "memory" },
  logger: { console: { transport: "console", level: "warn" } },
  discover: false,
});
jsreport.use(require("@jsreport/jsreport-express")());
jsreport.use(require("@jsreport/jsreport-chrome-pdf")());
jsreport.init().then(() => console.log(${JSON.stringify(READY)}), (err) => { console.error(err); process.exit(1); });
`;

/** Installs once; again when the pinned list changed (the marker holds the list it was made for). */
function install(): void {
  if (existsSync(INSTALLED) && readFileSync(INSTALLED, "utf8") === PACKAGES.join("\n")) return;
  mkdirSync(HOME, { recursive: true });
  writeFileSync(path.join(HOME, "package.json"), JSON.stringify({ private: true }));
  process.stdout.write(`installing ${PACKAGES.join(" ")} into ${HOME}\n`);
  execFileSync("npm", ["install", "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", ...PACKAGES], {
    cwd: HOME,
    stdio: "inherit",
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: "1" },
  });
  writeFileSync(INSTALLED, PACKAGES.join("\n"));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What jsreport is asked to render: the document's HTML as is (engine "none"; Pressroom expands the same template itself). */
function templateOf(doc: BenchDocument): Record<string, unknown> {
  if (doc.kind === "png") {
    const { width, height } = doc.image!;
    return {
      content: doc.html,
      engine: "none",
      recipe: "chrome-image",
      chromeImage: { type: "png", viewportWidth: width, viewportHeight: height, clipX: 0, clipY: 0, clipWidth: width, clipHeight: height },
    };
  }
  const { headerTemplate, footerTemplate, ...paper } = doc.pdf!;
  return {
    content: doc.html,
    engine: "none",
    recipe: "chrome-pdf",
    chrome: {
      ...paper,
      printBackground: true,
      displayHeaderFooter: Boolean(headerTemplate || footerTemplate),
      headerTemplate: headerTemplate || "<span></span>",
      footerTemplate: footerTemplate || "<span></span>",
    },
  };
}

/** A real peer in the compare run: jsreport's own HTTP API, started and stopped by the bench. */
export class JsreportPeer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly baseUrl: string,
    private readonly tempDir: string,
  ) {}

  static async start(chromium: string, workers: number): Promise<JsreportPeer> {
    install();
    const startScript = path.join(HOME, "start.js");
    writeFileSync(startScript, START_SCRIPT);
    const port = await freePort();
    // The floor's flags, containment included: jsreport writes the HTML to a temporary file and opens
    // it as a file: URL, which no proxy or host rule touches, and the documents load nothing else.
    const args = chromiumArgs({ sandbox: false, rendererHeapMiB: 512 });
    // jsreport's files and puppeteer's Chromium profiles go where TMPDIR points: a directory of this
    // run's, removed by close(), since a Chromium killed at the end cannot remove its own profile.
    const tempDir = mkdtempSync(path.join(tmpdir(), "pressroom-bench-jsreport-"));
    const child = spawn(process.execPath, [startScript], {
      cwd: HOME,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: tempDir, JSREPORT_BENCH: JSON.stringify({ port, workers, chromium, args }) },
    });
    const peer = new JsreportPeer(child, `http://127.0.0.1:${port}`, tempDir);
    let output = "";
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`jsreport did not start in 120 s:\n${output}`)), 120_000);
      const collect = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (output.includes(READY)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on("data", collect);
      child.stderr!.on("data", collect);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`jsreport exited with ${code}:\n${output}`));
      });
    });
    // A server that did not come up is stopped all the same: it runs detached, nothing else would end it.
    await ready.catch(async (err: unknown) => {
      await peer.close();
      throw err;
    });
    return peer;
  }

  private async renderOnce(doc: BenchDocument): Promise<void> {
    const response = await fetch(`${this.baseUrl}/api/report`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ template: templateOf(doc) }),
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const magic = Buffer.from(bytes.subarray(0, 4)).toString("latin1");
    if (response.status !== 200 || (doc.kind === "pdf" ? magic !== "%PDF" : magic !== "\x89PNG")) {
      throw new Error(`jsreport failed: ${response.status} ${Buffer.from(bytes.subarray(0, 300)).toString("utf8")}`);
    }
  }

  run(doc: BenchDocument, concurrency: number, count: number): Promise<RunStats> {
    return drive(concurrency, count, 2, () => this.renderOnce(doc));
  }

  /** Stops jsreport and its Chromium, which puppeteer starts in a process group of its own, and removes their files. */
  async close(): Promise<void> {
    const descendants = descendantsOf(this.child.pid!);
    // A child killed by a signal has a signalCode and no exitCode: its exit event is already past.
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      process.kill(-this.child.pid!, "SIGTERM");
      const timer = setTimeout(() => process.kill(-this.child.pid!, "SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    for (const pid of descendants) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    rmSync(this.tempDir, { recursive: true, force: true });
  }
}
