import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { GRPC_PEERS, type GrpcCertificates } from "@pressroom/platform";
import { DEFAULT_PORTS, REPO_ROOT, SERVICE_NAMES, databaseCredentials, forwardedSettings, serviceEnv } from "@pressroom/stack";

/**
 * Every setting a service's config.ts defines is listed in that service's
 * README, and up.sh passes it on from its environment unless it is wiring
 * the stack sets itself (addresses, ports, the database, secrets it makes).
 */

const certificates = Object.fromEntries(GRPC_PEERS.map((peer) => [peer, { ca: "/ca", cert: `/${peer}.crt`, key: `/${peer}.key` }])) as GrpcCertificates;
const database = databaseCredentials("postgres://admin:pw@127.0.0.1:5432/pressroom", (service) => `pw-${service}`);

/** The names config.ts gives its own settings (the platform's shared shapes aside). */
function ownSettings(service: string): string[] {
  const source = readFileSync(path.join(REPO_ROOT, "services", service, "src", "config.ts"), "utf8");
  return [...source.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
}

describe("each service's settings", () => {
  for (const service of SERVICE_NAMES) {
    it(`${service}: every setting of config.ts is in its README, and up.sh passes it on or sets it`, () => {
      const names = ownSettings(service);
      assert.ok(names.length > 0);
      const readme = readFileSync(path.join(REPO_ROOT, "services", service, "README.md"), "utf8");
      assert.deepEqual(
        names.filter((name) => !new RegExp(`\\b${name}\\b`).test(readme)),
        [],
        `settings of services/${service}/src/config.ts missing from its README`,
      );
      const wiring = serviceEnv(service, {
        databaseUrls: database.urls,
        natsUrl: "nats://x",
        ports: DEFAULT_PORTS,
        logDir: "/tmp",
        certificates,
        sealingKey: { key: "/sealing.key", publicKey: "/sealing.pub" },
        destinationSealingKey: { key: "/destination-sealing.key", publicKey: "/destination-sealing.pub" },
        secretEncryptionKey: "0".repeat(64),
      });
      const forwarded = forwardedSettings(Object.fromEntries(names.map((name) => [name, "x"])));
      assert.deepEqual(
        names.filter((name) => !(name in forwarded) && !(name in wiring)),
        [],
        `settings up.sh neither passes on nor sets for ${service}`,
      );
    });
  }
});
