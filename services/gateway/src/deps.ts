import { readSealingPublicKey, type Logger } from "@pressroom/platform";
import { RecentOutputs, type SealingRecipients } from "@pressroom/domain";
import { AnonymousReads } from "./access/anonymous";
import { Authenticator } from "./access/auth";
import type { Clients } from "./clients";
import { TrustedProxies } from "./client-ip";
import type { Config } from "./config";
import { OutcomeInbox } from "./jobs/job-watch";
import type { JobBus } from "./jobs/submit";
import { KEPT_OUTPUT_MAX_BYTES, type KeptOutputInfo } from "./output-delivery";
import { TemplateDirectory } from "./template-directory";
import { CustomerSchemas } from "./schemas/schemas";

/** Everything the HTTP app needs; main.ts builds it, tests build their own. */
export interface GatewayDeps {
  logger: Logger;
  clients: Clients;
  auth: Authenticator;
  templates: TemplateDirectory;
  /** Customers' data schemas, on threads of their own. */
  schemas: CustomerSchemas;
  /** Reads without a key: kept, and limited per client address. */
  anonymous: AnonymousReads;
  bus: JobBus;
  /**
   * The public sealing keys a job's secrets are sealed to: render's (SEALING_PUBLIC_KEY) for what it
   * renders with, the webhook service's (DESTINATION_SEALING_PUBLIC_KEY) for the destination.
   */
  sealTo: SealingRecipients;
  /** Where this process waits for the outcomes of the sync jobs it submits. */
  outcomes: OutcomeInbox;
  syncWaitMs: number;
  /** A webhook_url on a loopback address is accepted (WEBHOOK_ALLOW_LOOPBACK, development and tests only). */
  allowLoopbackWebhooks: boolean;
  /** Outputs announced with their job's end, by output id (see output-delivery.ts). */
  recentOutputs: RecentOutputs<KeptOutputInfo>;
  maxBodyBytes: number;
  trustedProxies: TrustedProxies;
  isReady: () => Promise<boolean>;
}

/** The gateway's deps around its connections: the caches, the schema threads, the outcome inbox and the settings the app reads. */
export function gatewayDeps(
  config: Readonly<Config>,
  connected: Pick<GatewayDeps, "logger" | "clients" | "bus" | "isReady"> & { schemas: CustomerSchemas },
): GatewayDeps {
  const { clients, bus } = connected;
  const trustedProxies = new TrustedProxies(config.TRUSTED_PROXIES);
  return {
    ...connected,
    auth: new Authenticator(clients.identity, config.AUTH_CACHE_MS),
    templates: new TemplateDirectory(clients.catalog, config.TEMPLATE_REFRESH_MS),
    anonymous: new AnonymousReads({ perMinute: config.ANONYMOUS_READS_PER_MINUTE, ttlMs: config.TEMPLATE_REFRESH_MS, trustedProxies }),
    sealTo: { render: readSealingPublicKey(config.SEALING_PUBLIC_KEY), webhook: readSealingPublicKey(config.DESTINATION_SEALING_PUBLIC_KEY) },
    outcomes: new OutcomeInbox(bus),
    syncWaitMs: config.SYNC_WAIT_MS,
    allowLoopbackWebhooks: config.WEBHOOK_ALLOW_LOOPBACK,
    recentOutputs: new RecentOutputs({ maxBytes: config.OUTPUT_CACHE_MAX_BYTES, maxEntryBytes: KEPT_OUTPUT_MAX_BYTES }),
    maxBodyBytes: config.MAX_BODY_BYTES,
    trustedProxies,
  };
}
