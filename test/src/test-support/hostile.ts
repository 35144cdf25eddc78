import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import type net from "node:net";
import { errorShape, type Api, type ApiResponse } from "./api";
import { scrape, total } from "./prometheus";
import { eventually } from "./webhook-receiver";

/**
 * What every hostile-document test asserts of the service, in one place:
 * the job failed naming the limit it hit, its owner was charged, and the
 * render pool has nothing of it left running.
 */

/**
 * Listens on a free loopback port: a server documents try to reach. It counts
 * the connections it got, and close() drops those still open.
 */
export async function listen<T extends net.Server>(server: T): Promise<{ server: T; port: number; connections(): number; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  let connections = 0;
  server.on("connection", (socket: net.Socket) => {
    connections++;
    open.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `422 RENDER_FAILED` in the three-field shape, its message naming `limit`. */
export function expectRenderFailed(response: ApiResponse, limit: RegExp, name = ""): void {
  assert.equal(response.status, 422, `${name}: ${response.text}`);
  const error = errorShape(response);
  assert.equal(error.code, "RENDER_FAILED", `${name}: ${response.text}`);
  assert.match(error.error, limit, name);
}

/**
 * The renders `key` is charged for once its jobs have ended and metering has
 * processed their outcomes (no slot in flight), so a refund would show.
 */
export async function rendersCharged(api: Api, key: string): Promise<number> {
  const usage = await eventually(
    "the key's jobs ended and were booked",
    async () => {
      const response = await api.get("/v1/keys/usage", { key });
      assert.equal(response.status, 200, response.text);
      return response.json.concurrency.in_flight === 0 ? response.json : undefined;
    },
    30_000,
    200,
  );
  return usage.renders.used as number;
}

/** The living (not zombie) processes under `pid`: for a render worker, Chromium's. */
export function descendantProcesses(pid: number): { pid: number; name: string }[] {
  const children = new Map<number, { pid: number; name: string }[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z") continue;
    const siblings = children.get(Number(ppid)) ?? [];
    siblings.push({ pid: Number(entry), name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) });
    children.set(Number(ppid), siblings);
  }
  const out: { pid: number; name: string }[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      out.push(child);
      walk(child.pid);
    }
  };
  walk(pid);
  return out;
}

/** The render pool's busy slots, as its /metrics reports them. */
export async function busyRenderSlots(healthPort: number): Promise<number> {
  return total("pressroom_render_slots", await scrape(healthPort), { state: "busy" });
}

/** CPU time (user + system clock ticks) each living process under `pid` has used so far. */
function cpuTicks(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const { pid: child } of descendantProcesses(pid)) {
    try {
      const fields = readFileSync(`/proc/${child}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks.set(child, Number(fields[11]) + Number(fields[12]));
    } catch {
      continue;
    }
  }
  return ticks;
}

/** The process under `pid` that used the most CPU over the next `ms` (a renderer spinning in a script loop), with its ticks then. */
export async function busiestProcess(pid: number, ms = 1_000): Promise<{ pid: number; ticks: number }> {
  const before = cpuTicks(pid);
  await new Promise((resolve) => setTimeout(resolve, ms));
  let busiest = { pid: 0, ticks: -1 };
  for (const [child, ticks] of cpuTicks(pid)) {
    const used = ticks - (before.get(child) ?? ticks);
    if (used > busiest.ticks) busiest = { pid: child, ticks: used };
  }
  return busiest;
}
