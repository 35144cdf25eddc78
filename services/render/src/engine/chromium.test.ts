import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { chromiumEnv, sweepAbandonedProfiles } from "./chromium";

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

describe("chromiumEnv", () => {
  it("passes what Chromium needs to find its libraries, fonts and locale, and nothing else", () => {
    const env = chromiumEnv("/tmp/pressroom-chromium-1-Ab12Cd", {
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TZ: "UTC",
      FONTCONFIG_FILE: "/etc/fonts/fonts.conf",
      XDG_CACHE_HOME: "/tmp/cache",
      HOME: "/home/worker",
      DATABASE_URL: "postgres://render:pw@db/pressroom",
      NATS_USER: "render",
      NATS_PASSWORD: "pw",
      OUTPUT_SIGNING_SECRET: "s",
      WEBHOOK_SECRET_ENCRYPTION_KEY: "k",
      NODE_OPTIONS: "--require ./x.js",
      RENDER_EXTRA_CA_FILE: "/ca.pem",
    });
    assert.deepEqual(env, {
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TZ: "UTC",
      FONTCONFIG_FILE: "/etc/fonts/fonts.conf",
      XDG_CACHE_HOME: "/tmp/cache",
      HOME: "/tmp/pressroom-chromium-1-Ab12Cd",
    });
  });
});
