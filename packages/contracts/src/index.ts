export * as identityV1 from "./gen/pressroom/identity/v1/identity";
export * as meteringV1 from "./gen/pressroom/metering/v1/metering";
export * as renderV1 from "./gen/pressroom/render/v1/templates";
export * as storageV1 from "./gen/pressroom/storage/v1/storage";
export * as jobEventsV1 from "./gen/pressroom/events/v1/jobs";
export * as accountEventsV1 from "./gen/pressroom/events/v1/accounts";
export * as webhookV1 from "./gen/pressroom/webhook/v1/webhook";
