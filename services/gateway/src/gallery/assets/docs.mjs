/**
 * GET /docs: Swagger UI over the service's own OpenAPI document. The
 * document's servers are replaced by this page's origin, so "Try it out"
 * calls the gateway that served the page (the only origin the page's
 * Content-Security-Policy lets it connect to).
 */
/* global SwaggerUIBundle */

const response = await fetch("/v1/openapi.json");
const spec = await response.json();
spec.servers = [{ url: window.location.origin, description: "This server" }];

SwaggerUIBundle({
  spec,
  dom_id: "#api-reference",
  deepLinking: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
});
