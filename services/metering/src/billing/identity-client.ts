import { identityV1 } from "@pressroom/contracts";
import { call } from "@pressroom/platform";

/** What billing asks identity, the owner of keys and their plans. */
export interface KeyDirectory {
  getKey(keyId: string): Promise<{ plan: string; revoked: boolean }>;
  /** Changes the plan; identity records account.plan_changed with the actor. */
  setPlan(keyId: string, plan: string, actor: "billing:local" | "billing:stripe"): Promise<{ previousPlan: string }>;
}

/** The KeyDirectory billing uses: identity's GetKey and SetPlan, over its gRPC client. */
export function identityDirectory(client: identityV1.IdentityServiceClient): KeyDirectory {
  return {
    async getKey(keyId) {
      const { key } = await call(client, client.getKey, { apiKey: "", keyId });
      return { plan: key?.plan ?? "", revoked: Boolean(key?.revoked) };
    },
    async setPlan(keyId, plan, actor) {
      const result = await call(client, client.setPlan, { apiKey: "", keyId, plan, actor });
      return { previousPlan: result.previousPlan };
    },
  };
}
