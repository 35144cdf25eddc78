import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { z } from "@pressroom/platform";
import { configSchema as gateway } from "../../../services/gateway/src/config";
import { configSchema as identity } from "../../../services/identity/src/config";
import { configSchema as metering } from "../../../services/metering/src/config";
import { chromiumHostConfigSchema as chromium, configSchema as render, postProcessHostConfigSchema as postprocess } from "../../../services/render/src/config";
import { configSchema as storage } from "../../../services/storage/src/config";
import { configSchema as webhook } from "../../../services/webhook/src/config";

/** Each container's own config schema: the six services', and Chromium's host and post-processing's in the render pod. */
export const CONFIG_SCHEMAS: Record<string, z.ZodType> = { gateway, identity, metering, render, storage, webhook, chromium, postprocess };

/**
 * A container's environment parsed by its config schema, as the service parses it at start: the
 * settings, or the problems it would report; the gRPC certificate and sealing key paths (files
 * mounted in the pod) point at placeholder files here, since only their presence is checked.
 */
export function parseConfig(container: string, env: Record<string, string>, dir: string): { config?: Record<string, unknown>; problems: string[] } {
  const schema = CONFIG_SCHEMAS[container];
  if (!schema) throw new Error(`no config schema for the container ${container}`);
  mkdirSync(dir, { recursive: true });
  const files = Object.fromEntries(
    ["GRPC_TLS_CA", "GRPC_TLS_CERT", "GRPC_TLS_KEY", "SEALING_KEY", "SEALING_PUBLIC_KEY", "DESTINATION_SEALING_KEY", "DESTINATION_SEALING_PUBLIC_KEY"]
      .filter((name) => env[name] !== undefined)
      .map((name) => {
        const file = path.join(dir, name);
        writeFileSync(file, "placeholder");
        return [name, file];
      }),
  );
  const parsed = schema.safeParse({ ...env, ...files });
  return parsed.success
    ? { config: parsed.data as Record<string, unknown>, problems: [] }
    : { problems: parsed.error.issues.map((issue) => `${container}: ${issue.path.join(".")}: ${issue.message}`) };
}

/** The problems a container's config schema finds in its environment (parseConfig). */
export const configProblems = (container: string, env: Record<string, string>, dir: string): string[] => parseConfig(container, env, dir).problems;
