import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Ports handed out lie below the kernel's ephemeral range (32768 and up by default), so that no
 * outgoing connection takes one between its choice and its use.
 */
const LEASED_RANGE = { first: 20_000, last: 32_000 } as const;
export const LEASE_DIR = path.join(tmpdir(), "pressroom-port-leases");
const leased = new Set<number>();
let releasedAtExit = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Leases `port` to this process by a file named after it, which holds the process's pid: two
 * processes (test files run side by side, each with its stacks) never lease the same port. A
 * lease whose process has ended is taken over; a process's leases end with it.
 */
export function leasePort(port: number): boolean {
  const file = path.join(LEASE_DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      leased.add(port);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSync(file, "utf8"));
      if (holder > 0 && alive(holder)) return false;
      try {
        unlinkSync(file);
      } catch {
        // Another process took it over first.
      }
    }
  }
  return false;
}

function releaseLeases(): void {
  for (const port of leased) {
    try {
      unlinkSync(path.join(LEASE_DIR, String(port)));
    } catch {
      // Already taken over.
    }
  }
  leased.clear();
}

function bindable(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/**
 * `count` distinct TCP ports, free on 127.0.0.1 a moment ago and leased to this process (see
 * lease): a port is never handed out twice, within a process or across processes.
 */
export async function distinctFreePorts(count: number): Promise<number[]> {
  mkdirSync(LEASE_DIR, { recursive: true });
  if (!releasedAtExit) {
    process.once("exit", releaseLeases);
    releasedAtExit = true;
  }
  const size = LEASED_RANGE.last - LEASED_RANGE.first + 1;
  const start = Math.floor(Math.random() * size);
  const ports: number[] = [];
  for (let i = 0; i < size && ports.length < count; i++) {
    const port = LEASED_RANGE.first + ((start + i) % size);
    if (leased.has(port) || !leasePort(port)) continue;
    const server = await bindable(port);
    if (!server) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    ports.push(port);
  }
  if (ports.length < count)
    throw new Error(`only ${ports.length} of ${count} ports could be leased in ${LEASED_RANGE.first}-${LEASED_RANGE.last} (${LEASE_DIR})`);
  return ports;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const [port] = await distinctFreePorts(1);
  return port!;
}

export function canConnect(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
