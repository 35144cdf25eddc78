import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@pressroom/platform/logger";
import { testLogger } from "../test-support/engine";
import { closedToNobody, nobodyCannotStart, PostProcessHost, type NeededFile } from "./host";

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0 ? {} : { skip: "runs a process as the user nobody, which needs root (CI's user)" };

/** Whether Node, started as nobody, can load `file`: what the kernel says, against which the check is held. */
function nobodyLoads(file: string): boolean {
  return spawnSync(process.execPath, [file], { uid: NOBODY, gid: NOBODY, cwd: "/" }).status === 0;
}

describe("post-processing host: what the user nobody can reach", () => {
  // mkdtemp makes 0700 directories, as `mktemp -d` did for the checkout that found this.
  const root = mkdtempSync(path.join(tmpdir(), "postprocess-host-test-"));
  const main = path.join(root, "app", "main.js");
  mkdirSync(path.dirname(main));
  writeFileSync(main, "process.exit(0);\n");
  chmodSync(path.dirname(main), 0o755);
  chmodSync(main, 0o644);
  const needs: NeededFile[] = [{ file: main, need: "read" }];
  after(() => rmSync(root, { recursive: true, force: true }));

  it("names the closed directory on the way, as the kernel refuses it", asRoot, () => {
    chmodSync(root, 0o700);
    assert.deepEqual(closedToNobody(needs), { path: root, need: "enter", mode: 0o700 });
    assert.equal(nobodyLoads(main), false);
  });

  it("finds nothing in the way once every directory is open and the file readable, and Node starts", asRoot, () => {
    chmodSync(root, 0o755);
    assert.equal(closedToNobody(needs), undefined);
    assert.equal(nobodyLoads(main), true);
  });

  it("names a file others cannot read", asRoot, () => {
    chmodSync(root, 0o755);
    chmodSync(main, 0o600);
    try {
      assert.deepEqual(closedToNobody(needs), { path: main, need: "read", mode: 0o600 });
      assert.equal(nobodyLoads(main), false);
    } finally {
      chmodSync(main, 0o644);
    }
  });

  it("counts the owner's bits of what nobody owns, not others'", asRoot, () => {
    chmodSync(root, 0o700);
    chownSync(root, NOBODY, NOBODY);
    try {
      assert.equal(closedToNobody(needs), undefined);
      assert.equal(nobodyLoads(main), true);
    } finally {
      chownSync(root, 0, 0);
    }
  });

  it("follows a symbolic link to where the file is, as the loader does", asRoot, () => {
    chmodSync(root, 0o700);
    const open = mkdtempSync(path.join(tmpdir(), "postprocess-host-link-"));
    try {
      chmodSync(open, 0o755);
      const link = path.join(open, "main.js");
      symlinkSync(main, link);
      assert.deepEqual(closedToNobody([{ file: link, need: "read" }]), { path: root, need: "enter", mode: 0o700 });
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });

  it("asks a program to be runnable, not readable", () => {
    chmodSync(root, 0o755);
    assert.deepEqual(closedToNobody([{ file: main, need: "run" }]), { path: main, need: "run", mode: 0o644 });
    assert.equal(closedToNobody([{ file: process.execPath, need: "run" }]), undefined);
  });

  it("says which path, its mode, and the three ways out", () => {
    const message = nobodyCannotStart({ path: "/tmp/tmp.AbC", need: "enter", mode: 0o700 });
    assert.match(message, /cannot enter \/tmp\/tmp\.AbC \(mode 0700\)/);
    assert.match(message, /chmod o\+x \/tmp\/tmp\.AbC/);
    assert.match(message, /user other than root/);
    assert.match(message, /RENDER_POSTPROCESS_URL/);
  });
});

describe("post-processing host: the child's lifetime", () => {
  it("outlives a terminal's Ctrl-C (SIGINT to the worker's process group) until the worker stops it with SIGTERM", async () => {
    const logger = testLogger();
    const host = new PostProcessHost(logger as unknown as Logger);
    const url = await host.url();
    const pid = host.pid!;
    process.kill(pid, "SIGINT");
    await sleep(500);
    assert.equal((await fetch(`${url}/healthz`)).status, 200, "the child still answers after SIGINT");
    assert.deepEqual(
      logger.lines.filter((line) => line.startsWith("error")),
      [],
    );
    await host.close();
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, "close() stopped the child");
    assert.deepEqual(
      logger.lines.filter((line) => line.startsWith("error")),
      [],
    );
  });
});
