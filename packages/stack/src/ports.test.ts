import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { LEASE_DIR, distinctFreePorts, leasePort } from "./ports";

/** A child process that leases `count` ports, prints them as JSON and then waits for stdin to close. */
function leasingChild(count: number): { ports: Promise<number[]>; child: ReturnType<typeof spawn> } {
  const script = `const { distinctFreePorts } = require(${JSON.stringify(path.join(__dirname, "ports.ts"))});
distinctFreePorts(${count}).then((ports) => { process.stdout.write(JSON.stringify(ports) + "\\n"); process.stdin.resume(); process.stdin.on("end", () => process.exit(0)); });`;
  const child = spawn(process.execPath, ["--import", "tsx", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  const ports = new Promise<number[]>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.endsWith("\n")) resolve(JSON.parse(out) as number[]);
    });
    child.once("exit", (code) => reject(new Error(`leasing child exited with ${code} before printing its ports`)));
  });
  return { ports, child };
}

const exited = (child: ReturnType<typeof spawn>) => new Promise((resolve) => child.once("exit", resolve));
const holder = (port: number) => readFileSync(path.join(LEASE_DIR, String(port)), "utf8");

describe("leased ports", () => {
  it("hands out distinct ports below the ephemeral range, each leased to this process", async () => {
    const ports = await distinctFreePorts(30);
    assert.equal(new Set(ports).size, 30);
    for (const port of ports) {
      assert.ok(port >= 20_000 && port <= 32_000, `${port} is in the leased range`);
      assert.equal(holder(port), String(process.pid));
    }
    const more = await distinctFreePorts(30);
    assert.deepEqual(
      more.filter((port) => ports.includes(port)),
      [],
      "a process is never given a port twice",
    );
  });

  it("never gives two processes the same port, and a process's leases end with it", async () => {
    const a = leasingChild(400);
    const b = leasingChild(400);
    const [portsA, portsB] = await Promise.all([a.ports, b.ports]);
    assert.equal(new Set([...portsA, ...portsB]).size, 800);
    assert.equal(holder(portsA[0]!), String(a.child.pid));
    a.child.stdin!.end();
    b.child.stdin!.end();
    await Promise.all([exited(a.child), exited(b.child)]);
    assert.ok(![...portsA, ...portsB].some((port) => existsSync(path.join(LEASE_DIR, String(port)))), "the leases were released at exit");
  });

  it("takes over a lease whose process died without releasing it, and never one whose process lives", async () => {
    const killed = leasingChild(5);
    const [port] = await killed.ports;
    assert.equal(leasePort(port!), false, "a live process's lease is kept");
    killed.child.kill("SIGKILL");
    await exited(killed.child);
    assert.equal(holder(port!), String(killed.child.pid), "a killed process leaves its lease behind");
    assert.equal(leasePort(port!), true);
    assert.equal(holder(port!), String(process.pid));
  });
});
