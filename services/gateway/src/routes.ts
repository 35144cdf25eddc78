import { billingRoutes } from "./billing/routes";
import { checkoutOperation, checkoutPageOperation, confirmOperation, stripeWebhookOperation } from "./billing/api";
import type { GatewayDeps } from "./deps";
import { createSessionOperation, deleteSessionOperation, getSessionOperation } from "./console/api";
import { sessionRoutes } from "./console/session";
import { imageOperation, jobListOperation, jobViewOperation, renderOperation, screenshotOperation } from "./jobs/api";
import { batchItemsOperation, cancelBatchOperation, createBatchOperation, getBatchOperation } from "./jobs/batch-api";
import { batchRoutes } from "./jobs/batches";
import { jobHandler } from "./jobs/create";
import { jobList } from "./jobs/list";
import { jobView } from "./jobs/view";
import { dailyUsageOperation, rotateKeyOperation, rotateWebhookSecretOperation, signupOperation, usageOperation, webhookSecretOperation } from "./keys/api";
import { keyRoutes } from "./keys/routes";
import { livezOperation, openApiOperation, readyzOperation } from "./meta/api";
import { metaRoutes } from "./meta/routes";
import { openApiDocument } from "./openapi";
import { deleteOutputOperation, downloadOperation } from "./outputs/api";
import { deleteOutputHandler, outputHandler } from "./outputs/routes";
import type { ApiRoute } from "./route";
import {
  createTemplateOperation,
  deleteTemplateOperation,
  getTemplateOperation,
  listTemplatesOperation,
  replaceTemplateOperation,
  previewDraftOperation,
  templateAssetOperation,
  templatePreviewOperation,
  templateVersionPreviewOperation,
  templateVersionOperation,
  templateVersionsOperation,
} from "./templates/api";
import { templateRoutes } from "./templates/routes";
import { deliveriesOperation, replayOperation } from "./webhooks/api";
import { webhookRoutes } from "./webhooks/routes";

/**
 * Every route of the public API, in one table, each with its handler and
 * operation from its feature, and each feature given only what it uses:
 * createServer (server.ts) registers these (and the pages of gallery/), and
 * the OpenAPI document (openapi.ts) is built from them, in this order (the
 * order GET /docs shows the operations of a tag in).
 */
export function routes(deps: GatewayDeps): ApiRoute[] {
  const { identity, metering, catalog, storage, webhook } = deps.clients;
  const { auth, logger } = deps;
  const outputs = { storage, recentOutputs: deps.recentOutputs };
  const { templates: directory, schemas, anonymous, bus, sealTo, outcomes, syncWaitMs, maxBodyBytes, allowLoopbackWebhooks } = deps;
  const job = { ...outputs, auth, metering, logger, templates: directory, schemas, bus, sealTo, outcomes, syncWaitMs, maxBodyBytes, allowLoopbackWebhooks };
  const batches = batchRoutes({ auth, metering, logger, templates: directory, schemas, bus, sealTo, storage });
  const templates = templateRoutes({ catalog, auth, metering, logger, schemas, anonymous });
  const keys = keyRoutes({ auth, identity, metering, webhook, trustedProxies: deps.trustedProxies });
  const webhooks = webhookRoutes({ auth, metering, webhook });
  const session = sessionRoutes({ identity, auth, trustedProxies: deps.trustedProxies });
  const jsm = deps.bus.jsm;
  const billing = billingRoutes({ auth, metering, logger });
  const meta = metaRoutes({ isReady: deps.isReady, openApiDocument: () => openApiDocument(table) });
  const table: ApiRoute[] = [
    { method: "POST", path: "/v1/render", operation: renderOperation, handler: jobHandler(job, "render") },
    { method: "POST", path: "/v1/image", operation: imageOperation, handler: jobHandler(job, "image") },
    { method: "POST", path: "/v1/screenshot", operation: screenshotOperation, handler: jobHandler(job, "screenshot") },
    { method: "GET", path: "/v1/templates", operation: listTemplatesOperation, handler: templates.listTemplates },
    { method: "POST", path: "/v1/templates", operation: createTemplateOperation, handler: templates.createTemplate },
    { method: "GET", path: "/v1/templates/:id", operation: getTemplateOperation, handler: templates.getTemplate },
    { method: "PUT", path: "/v1/templates/:id", operation: replaceTemplateOperation, handler: templates.replaceTemplate },
    { method: "DELETE", path: "/v1/templates/:id", operation: deleteTemplateOperation, handler: templates.deleteTemplate },
    { method: "GET", path: "/v1/templates/:id/versions", operation: templateVersionsOperation, handler: templates.listVersions },
    { method: "GET", path: "/v1/templates/:id/versions/:n", operation: templateVersionOperation, handler: templates.getTemplateVersion },
    { method: "GET", path: "/v1/templates/:id/versions/:n/assets/:name", operation: templateAssetOperation, handler: templates.getTemplateAsset },
    { method: "GET", path: "/v1/templates/:id/preview.png", operation: templatePreviewOperation, handler: templates.templatePreview },
    {
      method: "GET",
      path: "/v1/templates/:id/versions/:n/preview.png",
      operation: templateVersionPreviewOperation,
      handler: templates.templateVersionPreview,
    },
    { method: "POST", path: "/v1/templates/preview", operation: previewDraftOperation, handler: templates.previewDraft },
    { method: "GET", path: "/v1/keys/usage", operation: usageOperation, handler: keys.usage },
    { method: "GET", path: "/v1/keys/usage/daily", operation: dailyUsageOperation, handler: keys.usageDaily },
    { method: "GET", path: "/v1/keys/webhook-secret", operation: webhookSecretOperation, handler: keys.webhookSecret },
    { method: "POST", path: "/v1/keys/webhook-secret/rotate", operation: rotateWebhookSecretOperation, handler: keys.rotateWebhookSecret },
    { method: "POST", path: "/v1/keys/rotate", operation: rotateKeyOperation, handler: keys.rotateKey },
    { method: "POST", path: "/v1/billing/checkout", operation: checkoutOperation, handler: billing.checkout },
    { method: "POST", path: "/v1/signup", operation: signupOperation, handler: keys.signup },
    { method: "GET", path: "/v1/jobs", operation: jobListOperation, handler: jobList({ auth, metering, jsm, webhook, storage }) },
    { method: "GET", path: "/v1/jobs/:id", operation: jobViewOperation, handler: jobView({ auth, metering, jsm, storage }) },
    { method: "POST", path: "/v1/batches", operation: createBatchOperation, handler: batches.create },
    { method: "GET", path: "/v1/batches/:id", operation: getBatchOperation, handler: batches.view },
    { method: "GET", path: "/v1/batches/:id/items", operation: batchItemsOperation, handler: batches.items },
    { method: "DELETE", path: "/v1/batches/:id", operation: cancelBatchOperation, handler: batches.cancel },
    { method: "GET", path: "/v1/webhooks/deliveries", operation: deliveriesOperation, handler: webhooks.deliveries },
    { method: "POST", path: "/v1/webhooks/deliveries/:id/replay", operation: replayOperation, handler: webhooks.replay },
    { method: "GET", path: "/v1/outputs/:id", operation: downloadOperation, handler: outputHandler(outputs) },
    { method: "DELETE", path: "/v1/outputs/:id", operation: deleteOutputOperation, handler: deleteOutputHandler({ ...outputs, auth, metering }) },
    { method: "GET", path: "/v1/openapi.json", operation: openApiOperation, handler: meta.openApi },
    { method: "GET", path: "/v1/billing/checkout/:id", operation: checkoutPageOperation, handler: billing.checkoutPage },
    { method: "POST", path: "/v1/billing/checkout/:id", operation: confirmOperation, handler: billing.confirm },
    { method: "POST", path: "/v1/billing/stripe/webhook", operation: stripeWebhookOperation, handler: billing.stripeWebhook },
    { method: "POST", path: "/console/session", operation: createSessionOperation, handler: session.signIn },
    { method: "GET", path: "/console/session", operation: getSessionOperation, handler: session.current },
    { method: "DELETE", path: "/console/session", operation: deleteSessionOperation, handler: session.signOut },
    { method: "GET", path: "/livez", operation: livezOperation, handler: meta.livez },
    { method: "GET", path: "/readyz", operation: readyzOperation, handler: meta.readyz },
  ];
  return table;
}
