import { mkdtempSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { noop, withTimeout } from "./async";

/**
 * Debian's chromium-headless-shell: Chromium's headless shell, without the
 * browser UI that the full browser's headless mode still builds for every page.
 */
export const DEFAULT_CHROMIUM_PATH = "/usr/lib/chromium/chromium-headless-shell";

/** Where anything that escapes request interception is sent: nothing listens there. */
export const DEAD_PROXY = "127.0.0.1:9";

export interface LaunchSettings {
  executablePath: string;
  sandbox: boolean;
  rendererHeapMiB: number;
  /** Each Chromium process's data limit (RLIMIT_DATA), in MiB: see EngineOptions.processMemoryMiB. */
  processMemoryMiB: number;
  protocolTimeoutMs: number;
  /**
   * A Chromium started elsewhere (its own container, its own user), driven over its DevTools
   * endpoint on loopback, e.g. http://127.0.0.1:9222. Unset: Chromium is launched here, over a pipe.
   */
  connectUrl?: string;
}

/**
 * The only variables Chromium gets from the environment it is started from: what it needs to
 * find its libraries, fonts and locale. Everything else (the worker's DATABASE_URL, NATS
 * credentials, keys) stays behind, out of reach of a compromised renderer's /proc/self/environ.
 */
const PASSED_TO_CHROMIUM = /^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|FONTCONFIG_[A-Z]+|XDG_[A-Z_]+)$/;

/** Chromium's whole environment: the allow-list above, and HOME in its own profile directory. */
export function chromiumEnv(home: string, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) if (value !== undefined && PASSED_TO_CHROMIUM.test(name)) env[name] = value;
  return { ...env, HOME: home };
}

/** Flags measured in README.md; each is either speed or containment. */
export function chromiumArgs(settings: Pick<LaunchSettings, "sandbox" | "rendererHeapMiB">): string[] {
  return [
    ...(settings.sandbox ? [] : ["--no-sandbox"]),
    // speed and quiet
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    // the full browser opens no window and tab at launch
    "--no-startup-window",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
    "--font-render-hinting=none",
    "--hide-scrollbars",
    "--deny-permission-prompts",
    // the headless shell has no popup blocker: window.open and target=_blank get nothing
    "--block-new-web-contents",
    "--disable-notifications",
    // RenderDocument/BackForwardCache/PaintHolding: a cheaper navigation, and no back/forward cache
    // from which a previous job's live document could be restored. Site isolation off: every frame
    // of a document lives in its page's process, so the page's request interception sees all of
    // their requests, and no cross-site iframe costs a process. ThirdPartyStoragePartitioning off:
    // a cross-site frame's storage is keyed by its own origin, which the wipe clears. The WebUI omnibox
    // popups and top-chrome preloading: the full browser's headless mode otherwise loads an omnibox
    // popup (a renderer of its own, ~0.5 s of CPU) for every window, i.e. for every page the engine opens.
    "--disable-features=RenderDocument,BackForwardCache,PaintHolding,IsolateOrigins,site-per-process,ThirdPartyStoragePartitioning,Prerender2,MediaRouter,OptimizationHints,Translate,WebUIOmniboxAimPopup,WebUIOmniboxPopup,WebUIOmniboxFullPopup,PreloadTopChromeWebUI",
    "--disable-site-isolation-trials",
    // containment: whatever escapes interception (WebSocket, WebRTC, preconnect, workers) fails
    "--host-resolver-rules=MAP * ~NOTFOUND",
    `--proxy-server=${DEAD_PROXY}`,
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    // an allocation loop hits this and crashes its renderer instead of the machine
    `--js-flags=--max-old-space-size=${settings.rendererHeapMiB}`,
  ];
}

/** util-linux's prlimit (Debian's util-linux is essential: every image based on it has it). */
export const PRLIMIT_PATH = "/usr/bin/prlimit";

/**
 * The command that starts Chromium under its data limit: prlimit sets RLIMIT_DATA and execs
 * Chromium in its own place (the same process id), and every process Chromium starts (zygote,
 * renderers, helpers) inherits the limit, each for itself. Memory outside V8's heap (ArrayBuffers,
 * WebAssembly memories) counts against it, which the heap limit does not see: an allocation past
 * it fails in the renderer that asked (a RangeError, or the renderer's crash), never the machine.
 */
export function limitedCommand(executablePath: string, args: readonly string[], processMemoryMiB: number): { command: string; args: string[] } {
  return { command: PRLIMIT_PATH, args: [`--data=${processMemoryMiB * 1024 * 1024}`, "--", executablePath, ...args] };
}

/** Profile directories are named after the process that owns them: `pressroom-chromium-<pid>-<random>`. */
const PROFILE_PREFIX = "pressroom-chromium-";
const OWNED_PROFILE = new RegExp(`^${PROFILE_PREFIX}(\\d+)-`);

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the profile directories in `dir` whose owning process is gone: a
 * render service killed with SIGKILL cannot remove its own. A directory whose
 * owner's pid was reused stays (a leak, never a wrong removal). Returns the
 * names removed.
 */
export function sweepAbandonedProfiles(dir = tmpdir()): Promise<string[]> {
  return sweepAbandonedDirs(OWNED_PROFILE, dir);
}

/** Removes the directories in `dir` whose name `owned` matches, its first group the pid of a process that is gone (see sweepAbandonedProfiles). */
export async function sweepAbandonedDirs(owned: RegExp, dir = tmpdir()): Promise<string[]> {
  const abandoned = (await readdir(dir)).filter((name) => {
    const owner = owned.exec(name)?.[1];
    return owner !== undefined && Number(owner) !== process.pid && !processExists(Number(owner));
  });
  await Promise.all(abandoned.map((name) => rm(path.join(dir, name), { recursive: true, force: true })));
  return abandoned;
}

let swept = false;

/** A fresh profile directory, named after this process; the first one made also sweeps those of dead processes, in the background. */
export function makeProfileDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), `${PROFILE_PREFIX}${process.pid}-`));
  if (!swept) {
    swept = true;
    // Best effort: what cannot be removed now is tried again at the next start.
    setImmediate(() => void sweepAbandonedProfiles().catch(() => undefined));
  }
  return dir;
}

/** Launch options shared by the pipe launch and the arguments of a Chromium started on its own. */
const launchOptions = (settings: LaunchSettings, userDataDir: string) =>
  ({
    executablePath: settings.executablePath,
    userDataDir,
    // The shell's headless mode (with the full browser's binary, its new headless mode).
    headless: "shell",
    args: chromiumArgs(settings),
    // The full browser's popup blocker stays on; popups that get through are closed at once.
    // No about:blank to open at launch: the headless shell made a tab (and a renderer) of it.
    ignoreDefaultArgs: ["--disable-popup-blocking", "about:blank"],
    env: chromiumEnv(userDataDir),
  }) as const;

/** Chromium's whole command line but its DevTools transport: puppeteer's defaults (less those ignored) and the engine's flags. */
function fullChromiumArgs(settings: Pick<LaunchSettings, "sandbox" | "rendererHeapMiB">, userDataDir: string): string[] {
  const { ignoreDefaultArgs, args, headless } = launchOptions({ ...settings, executablePath: "", processMemoryMiB: 0, protocolTimeoutMs: 0 }, userDataDir);
  const ignored = new Set<string>(ignoreDefaultArgs);
  return puppeteer.defaultArgs({ headless, args: [...args], userDataDir }).filter((arg) => !ignored.has(arg));
}

/**
 * The command line of a Chromium run on its own (the chart's Chromium container,
 * chromium-main.ts): the same flags as a launch over a pipe, puppeteer's defaults
 * included, with the DevTools endpoint on loopback instead of the pipe.
 */
export function remoteChromiumArgs(settings: Pick<LaunchSettings, "sandbox" | "rendererHeapMiB">, userDataDir: string, port: number): string[] {
  return [...fullChromiumArgs(settings, userDataDir), "--remote-debugging-address=127.0.0.1", `--remote-debugging-port=${port}`];
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The browser's DevTools WebSocket of the Chromium at `connectUrl` (its /json/version): only at
 * that same host and port. An answer naming another address (whatever answers on the port, or a
 * browser bent to it) is refused, so the worker never drives a browser it was not pointed at.
 */
export async function browserEndpoint(connectUrl: string, signal?: AbortSignal): Promise<string> {
  const base = new URL(connectUrl);
  const response = await fetch(new URL("/json/version", base), { signal, redirect: "error" });
  if (!response.ok) throw new Error(`Chromium at ${connectUrl} answered ${response.status} for /json/version`);
  const { webSocketDebuggerUrl } = (await response.json()) as { webSocketDebuggerUrl?: unknown };
  const endpoint = typeof webSocketDebuggerUrl === "string" && URL.canParse(webSocketDebuggerUrl) ? new URL(webSocketDebuggerUrl) : undefined;
  if (!endpoint || endpoint.protocol !== "ws:" || endpoint.hostname !== base.hostname || endpoint.port !== base.port) {
    throw new Error(`Chromium at ${connectUrl} named a DevTools endpoint elsewhere (${String(webSocketDebuggerUrl)}): refused`);
  }
  return endpoint.href;
}

/**
 * Connects to a Chromium started on its own (see LaunchSettings.connectUrl), at the DevTools
 * endpoint on its host and port (browserEndpoint). The
 * connection is the engine's only hold on it: closing means disconnecting, which
 * disposes the contexts the engine made (they are created with disposeOnDetach).
 */
export async function connectChromium(settings: LaunchSettings & { connectUrl: string }): Promise<Browser> {
  const timeout = AbortSignal.timeout(CONNECT_TIMEOUT_MS);
  const connecting = browserEndpoint(settings.connectUrl, timeout).then((browserWSEndpoint) =>
    puppeteer.connect({
      browserWSEndpoint,
      defaultViewport: null,
      protocolTimeout: settings.protocolTimeoutMs,
      targetFilter: (target) => target.type() === "browser",
    }),
  );
  try {
    return await withTimeout(connecting, CONNECT_TIMEOUT_MS, `connecting to Chromium at ${settings.connectUrl}`);
  } catch (err) {
    // A connection that comes up after the timeout is dropped at once.
    connecting.then((late) => late.disconnect(), noop).catch(noop);
    throw err;
  }
}

/** The engine's browser: connected to when a connectUrl is set, else launched here. */
export function openChromium(settings: LaunchSettings): Promise<Browser> {
  const { connectUrl } = settings;
  return connectUrl === undefined ? launchChromium(settings) : connectChromium({ ...settings, connectUrl });
}

/**
 * Launches Chromium over a pipe (no DevTools port a document could reach),
 * with the minimal environment of chromiumEnv, under its data limit
 * (limitedCommand: puppeteer starts prlimit with Chromium's whole command line,
 * and adds the pipe's flag at its end).
 *
 * The profile directory is made here, synchronously, and removed when the
 * process exits: puppeteer then has no I/O to wait for before it spawns
 * Chromium, so the process is running by the time the caller's next turn of
 * the event loop comes, and a caller can do other work while it boots. The
 * first launch in a process also sweeps directories left by dead ones, once
 * Chromium is on its way.
 */
export async function launchChromium(settings: LaunchSettings): Promise<Browser> {
  const userDataDir = makeProfileDir();
  const removeProfile = () => rmSync(userDataDir, { recursive: true, force: true });
  let browser: Browser;
  try {
    const { env } = launchOptions(settings, userDataDir);
    const limited = limitedCommand(settings.executablePath, fullChromiumArgs(settings, userDataDir), settings.processMemoryMiB);
    browser = await puppeteer.launch({
      executablePath: limited.command,
      userDataDir,
      env,
      ignoreDefaultArgs: true,
      args: limited.args,
      pipe: true,
      defaultViewport: null,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 30_000,
      waitForInitialPage: false,
      protocolTimeout: settings.protocolTimeoutMs,
      // The engine drives its pages over its own sessions; puppeteer attaching a second
      // session to each of them (and their workers) would only cost CPU per navigation.
      targetFilter: (target) => target.type() === "browser",
    });
  } catch (err) {
    removeProfile();
    throw err;
  }
  const proc = browser.process();
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) removeProfile();
  else proc.once("exit", removeProfile);
  return browser;
}
