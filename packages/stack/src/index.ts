export * from "./nats";
export * from "./ports";
export * from "./postgres";
export * from "./services";
export * from "./test-stack";
export * from "./webhook-listener";
