#!/usr/bin/env node
import path from "node:path";
import { parseArgs } from "node:util";
import { identityV1, meteringV1 } from "@pressroom/contracts";
import { AppError, ConfigError, call, createGrpcClient, defaultGrpcAddr, grpcTlsShape, loadConfig, grpcTlsOf, z } from "@pressroom/platform";

/** up.sh's certificates: the CLI is the `admin` peer, the only one identity lets mint keys. */
const LOCAL_TLS = path.resolve(__dirname, "..", "..", "..", ".data", "grpc-tls");

const USAGE = `pressroom-admin: operator commands (talks gRPC to identity and metering)

  pressroom-admin keys create --email <email> [--plan <plan>]   prints the new key on its own line (plan: free unless given)
  pressroom-admin keys revoke <key | key_id>
  pressroom-admin keys set-plan <key | key_id> <plan>
  pressroom-admin keys show <key | key_id>
  pressroom-admin usage show <key | key_id>   as GET /v1/keys/usage answers it, with the key id
  pressroom-admin usage set <key | key_id> --used <n>

Environment: IDENTITY_ADDR (default ${defaultGrpcAddr("identity")}), METERING_ADDR (default ${defaultGrpcAddr("metering")}),
GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY: the deployment's CA and the admin certificate and key
(default: up.sh's, .data/grpc-tls/ca.crt, admin.crt and admin.key of this checkout).
Plans: demo, free, starter, pro, business.`;

function keyRef(value: string | undefined): { apiKey: string; keyId: string } {
  if (!value) throw new UsageError("a key or key id is required");
  return value.startsWith("key_") ? { apiKey: "", keyId: value } : { apiKey: value, keyId: "" };
}

class UsageError extends Error {}

/** A key's usage in the shape GET /v1/keys/usage answers it. */
function usageAnswer(usage: meteringV1.Usage) {
  return {
    plan: usage.plan,
    period: { start: usage.periodStart, end: usage.periodEnd },
    renders: { used: Number(usage.rendersUsed), limit: Number(usage.rendersLimit), remaining: Number(usage.rendersRemaining) },
    previews: { used: Number(usage.previewsUsed), limit: Number(usage.previewsLimit), remaining: Number(usage.previewsRemaining) },
    test: { used: Number(usage.testUsed), limit: Number(usage.testLimit), remaining: Number(usage.testRemaining) },
    rate_limit: { limit: usage.rate?.limit ?? 0, remaining: usage.rate?.remaining ?? 0, reset_seconds: usage.rate?.resetSeconds ?? 0, window_seconds: 60 },
    concurrency: { limit: usage.concurrencyLimit, in_flight: usage.inFlight },
  };
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { email: { type: "string" }, plan: { type: "string" }, used: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const [area, command, ...rest] = positionals;
  if (values.help || !area) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig(z.object(grpcTlsShape), {
    GRPC_TLS_CA: path.join(LOCAL_TLS, "ca.crt"),
    GRPC_TLS_CERT: path.join(LOCAL_TLS, "admin.crt"),
    GRPC_TLS_KEY: path.join(LOCAL_TLS, "admin.key"),
    ...process.env,
  });
  const tls = grpcTlsOf(config);
  const identity = createGrpcClient(identityV1.IdentityServiceClient, process.env.IDENTITY_ADDR ?? defaultGrpcAddr("identity"), tls, "identity");
  const metering = createGrpcClient(meteringV1.MeteringServiceClient, process.env.METERING_ADDR ?? defaultGrpcAddr("metering"), tls, "metering");
  try {
    switch (`${area} ${command ?? ""}`) {
      case "keys create": {
        if (!values.email) throw new UsageError("keys create needs --email");
        const created = await call(identity, identity.createKey, { email: values.email, plan: values.plan ?? "free" });
        process.stderr.write(`created ${created.key?.keyId} (${created.key?.plan}) for ${created.key?.email}; the key is shown once:\n`);
        process.stdout.write(`${created.apiKey}\n`);
        return;
      }
      case "keys revoke": {
        const { key } = await call(identity, identity.revokeKey, keyRef(rest[0]));
        print({ key_id: key?.keyId, revoked: key?.revoked });
        return;
      }
      case "keys set-plan": {
        if (!rest[1]) throw new UsageError("keys set-plan needs <key> <plan>");
        const result = await call(identity, identity.setPlan, { ...keyRef(rest[0]), plan: rest[1], actor: "operator" });
        print({ key_id: result.key?.keyId, from: result.previousPlan, to: result.key?.plan });
        return;
      }
      case "keys show": {
        const { key } = await call(identity, identity.getKey, keyRef(rest[0]));
        print(key);
        return;
      }
      case "usage show": {
        const { key } = await call(identity, identity.getKey, keyRef(rest[0]));
        const { usage } = await call(metering, metering.getUsage, { keyId: key!.keyId, plan: key!.plan });
        print({ key_id: key!.keyId, ...usageAnswer(usage!) });
        return;
      }
      case "usage set": {
        if (values.used === undefined || !/^\d+$/.test(values.used)) throw new UsageError("usage set needs --used <n>");
        const { key } = await call(identity, identity.getKey, keyRef(rest[0]));
        const result = await call(metering, metering.setUsage, { keyId: key!.keyId, plan: key!.plan, rendersUsed: values.used, actor: "operator" });
        print({ key_id: key!.keyId, from: Number(result.previousRendersUsed), to: Number(result.usage?.rendersUsed) });
        return;
      }
      default:
        throw new UsageError(`unknown command "${positionals.join(" ")}"`);
    }
  } finally {
    identity.close();
    metering.close();
  }
}

/** What the server or the connection said, when the error carries no Pressroom code: e.g. a certificate refused. */
function grpcCause(err: AppError): string {
  const cause = err.cause as { code?: number; details?: string } | undefined;
  return cause?.code === undefined ? "" : ` (gRPC status ${cause.code}: ${cause.details ?? ""})`;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) process.stderr.write(`error: ${err.message}\n\n${USAGE}\n`);
  else if (err instanceof AppError) process.stderr.write(`error: ${err.code}: ${err.message}${grpcCause(err)}\n`);
  else if (err instanceof ConfigError) process.stderr.write(`error: ${err.message}\n(the admin certificate: run ./scripts/up.sh once, or set GRPC_TLS_*)\n`);
  else process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
