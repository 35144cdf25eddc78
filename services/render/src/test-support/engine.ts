import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_CHROMIUM_PATH, RenderEngine, RenderFailure, type EngineLogger, type EngineOptions, type SubresourceFetcher } from "../engine";

/** Test-only helpers (real tools, real sockets; nothing mocked). */

/** Asserts a RenderFailure of `reason`, retryable exactly when the reason is. */
export function failsWith(reason: RenderFailure["reason"]) {
  return (err: unknown) => {
    assert.ok(err instanceof RenderFailure, `expected a RenderFailure, got ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    assert.equal(err.retryable, reason === "crashed" || reason === "page_lost");
    return true;
  };
}

/** An engine on the machine's Chromium (CHROMIUM_PATH, else the engine's default). */
export function startEngine(options: Omit<EngineOptions, "executablePath">): Promise<RenderEngine> {
  return RenderEngine.start({ executablePath: process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH, ...options });
}

function withTempFile<T>(data: Uint8Array, fn: (file: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), "engine-test-"));
  const file = path.join(dir, "out.pdf");
  try {
    writeFileSync(file, data);
    return fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function pdfText(data: Uint8Array): string {
  return withTempFile(data, (file) => execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" }));
}

export function pdfInfo(data: Uint8Array): { pages: number; widthPt: number; heightPt: number } {
  const out = withTempFile(data, (file) => execFileSync("pdfinfo", [file], { encoding: "utf8" }));
  const size = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(out);
  const pages = /Pages:\s+(\d+)/.exec(out);
  return { pages: Number(pages?.[1]), widthPt: Number(size?.[1]), heightPt: Number(size?.[2]) };
}

/** The PDF's outline (bookmarks) as qpdf reads it: each entry's title and its children. */
export interface OutlineEntry {
  title: string;
  kids: OutlineEntry[];
}

export function pdfOutline(data: Uint8Array, password?: string): OutlineEntry[] {
  const args = (file: string) => [...(password === undefined ? [] : [`--password=${password}`]), "--json", "--json-key=outlines", file];
  const json = withTempFile(data, (file) => execFileSync("qpdf", args(file), { encoding: "utf8" }));
  const entries = (list: { title: string; kids: unknown[] }[]): OutlineEntry[] =>
    list.map((entry) => ({ title: entry.title, kids: entries(entry.kids as { title: string; kids: unknown[] }[]) }));
  return entries((JSON.parse(json) as { outlines: { title: string; kids: unknown[] }[] }).outlines);
}

/** pdffonts' rows: name, type, and whether the font is embedded and has a Unicode map. */
export function pdfFonts(data: Uint8Array): { name: string; type: string; embedded: boolean; unicode: boolean }[] {
  return withTempFile(data, (file) => execFileSync("pdffonts", [file], { encoding: "utf8" }))
    .split("\n")
    .slice(2)
    .filter(Boolean)
    .map((line) => {
      // name, type (one or more words), encoding, emb, sub, uni, object, generation
      const cols = line.trim().split(/\s+/);
      return { name: cols[0]!, type: cols.slice(1, -6).join(" "), embedded: cols.at(-5) === "yes", unicode: cols.at(-3) === "yes" };
    });
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(data: Uint8Array): { width: number; height: number } {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  assertPng(buf);
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

function assertPng(buf: Buffer): void {
  if (buf.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a" || buf.subarray(12, 16).toString("latin1") !== "IHDR") {
    throw new Error("not a PNG");
  }
}

/** An HTTP server on 127.0.0.1 that records every request it gets. */
export async function recordingHttpServer(): Promise<{ port: number; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.end("reached");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A TCP server that counts connections; `silent` ones accept and never answer. */
export async function tcpServer(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A fetcher that really connects (plain HTTP only), for the timeout test. */
export const connectingFetcher: SubresourceFetcher = ({ url, method, signal }) =>
  new Promise((resolve, reject) => {
    const req = http.request(url, { method, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join("\n") : v;
        resolve({ status: res.statusCode ?? 502, headers, body: Buffer.concat(chunks) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });

/** Collects log lines; fails loudly on none. */
export function testLogger(): EngineLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) =>
    lines.push(`${level} ${msg ?? ""} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`);
  return { lines, info: log("info"), warn: log("warn"), error: log("error") };
}

/**
 * The processes of a browser's process group (the browser is its leader), each
 * with its command line (Chromium rewrites its children's as one string with
 * spaces, so both separators split).
 */
export function browserProcesses(browserPid: number): { pid: number; args: string[] }[] {
  const found: { pid: number; args: string[] }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pgrp is the 5th field of /proc/<pid>/stat; the command name before it may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp === browserPid)
        found.push({
          pid: Number(entry),
          args: readFileSync(`/proc/${entry}/cmdline`, "utf8")
            .split(/[\0 ]+/)
            .filter(Boolean),
        });
    } catch {
      // the process exited while being read
    }
  }
  return found;
}
