import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { sweepAbandonedProfiles } from "./chromium";

describe("sweepAbandonedProfiles", () => {
  it("removes the profile directories of processes that are gone, and nothing else", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "profile-sweep-"));
    try {
      const gone = spawnSync(process.execPath, ["-e", ""]).pid;
      const names = {
        gone: `pressroom-chromium-${gone}-Ab12Cd`,
        ours: `pressroom-chromium-${process.pid}-Ef34Gh`,
        init: "pressroom-chromium-1-Ij56Kl",
        unnamed: "pressroom-chromium-Mn78Op",
        other: "something-else-1-Qr90St",
      };
      for (const name of Object.values(names)) mkdirSync(path.join(dir, name, "Default"), { recursive: true });
      writeFileSync(path.join(dir, names.gone, "Default", "Cookies"), "x");

      assert.deepEqual(await sweepAbandonedProfiles(dir), [names.gone]);
      assert.deepEqual(readdirSync(dir).sort(), [names.init, names.ours, names.other, names.unnamed].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
