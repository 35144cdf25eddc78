import { renderV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { errors } from "./http/errors";

export interface TemplateInfo {
  template: renderV1.Template;
  validate: ValidateFunction;
}

/**
 * The gateway's view of the catalog: each template looked up through the
 * render service, cached briefly, with its data schema compiled once per
 * version.
 */
export class TemplateDirectory {
  private readonly ajv = new Ajv2020({ allErrors: false, strict: false });
  private readonly byId = new Map<string, { info: Promise<TemplateInfo>; until: number }>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly catalog: renderV1.TemplateCatalogServiceClient,
    private readonly ttlMs = 10_000,
  ) {
    addFormats(this.ajv);
  }

  get(id: string): Promise<TemplateInfo> {
    const now = Date.now();
    const cached = this.byId.get(id);
    if (cached && cached.until > now) return cached.info;
    const info = call(this.catalog, this.catalog.getTemplate, { id }).then(({ template }) => {
      if (!template) throw new AppError("TEMPLATE_NOT_FOUND", `template "${id}" does not exist`, "List the available templates with GET /v1/templates.");
      return { template, validate: this.validator(template) };
    });
    this.byId.set(id, { info, until: now + this.ttlMs });
    info.catch(() => this.byId.delete(id));
    return info;
  }

  private validator(template: renderV1.Template): ValidateFunction {
    const key = `${template.id}@${template.version}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(template.dataSchemaJson) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

/** Validates data against a template's schema: 422 naming the failing path. */
export function checkTemplateData(info: TemplateInfo, data: unknown): AppError | undefined {
  if (info.validate(data)) return undefined;
  const first = info.validate.errors?.[0];
  if (!first) return errors.payload("data: does not match the template's schema");
  const missing = first.keyword === "required" ? `/${String((first.params as { missingProperty?: string }).missingProperty)}` : "";
  const extra = first.keyword === "additionalProperties" ? `/${String((first.params as { additionalProperty?: string }).additionalProperty)}` : "";
  const path = `data${first.instancePath}${missing}${extra}`.replace(/\//g, ".").replace(/^data\./, "data.");
  const message = first.keyword === "required" ? "is required" : first.keyword === "additionalProperties" ? "is not allowed by the template" : (first.message ?? "is invalid");
  return errors.payload(`${path}: ${message}`, `See the data_schema of template "${info.template.id}" in GET /v1/templates.`);
}
