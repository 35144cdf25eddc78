export { classifyAddress, type AddressKind, type Classification, type GuardOptions } from "./classify";
export { NetGuardError } from "./errors";
export {
  guardedLookup,
  resolvePublic,
  resolvePublicAll,
  type GuardedLookupFunction,
  type LookupAllFunction,
  type PublicAddress,
  type ResolveOptions,
} from "./resolve";
export { createGuardedAgent, createGuardedHttpAgent, type GuardedAgentOptions } from "./agent";
export { WEB_PORTS, checkPort, portOf } from "./ports";
