import type { Logger } from "@pressroom/platform";
import type { RecentOutputs } from "@pressroom/domain";
import type { Authenticator } from "./access/auth";
import type { Clients } from "./clients";
import type { TrustedProxies } from "./client-ip";
import type { OutcomeInbox } from "./jobs/job-watch";
import type { JobBus } from "./jobs/submit";
import type { KeptOutputInfo } from "./output-delivery";
import type { TemplateDirectory } from "./templates/directory";

/** Everything the HTTP app needs; main.ts builds it, tests build their own. */
export interface GatewayDeps {
  logger: Logger;
  clients: Clients;
  auth: Authenticator;
  templates: TemplateDirectory;
  bus: JobBus;
  /** Where this process waits for the outcomes of the sync jobs it submits. */
  outcomes: OutcomeInbox;
  syncWaitMs: number;
  /** Outputs announced with their job's end, by output id (see output-delivery.ts). */
  recentOutputs: RecentOutputs<KeptOutputInfo>;
  maxBodyBytes: number;
  trustedProxies: TrustedProxies;
  isReady: () => Promise<boolean>;
}
