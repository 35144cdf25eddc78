import { renderV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import { templateNotFound } from "@pressroom/domain";
import type { ValidateFunction } from "ajv/dist/2020";
import { ajv } from "./schemas/ajv";
import { dataProblem } from "./schemas/schemas";

export interface TemplateInfo {
  template: renderV1.Template;
  /** The public catalog's schema, compiled here; an own template's runs on the schema threads (schemas.ts). */
  validate?: ValidateFunction;
}

interface CachedTemplate {
  info: Promise<TemplateInfo>;
  /** When the next request starts a refresh; set once info has resolved (only a known template is refreshed). */
  refreshAt: number;
  refreshing: boolean;
}

/** Compiled data schemas of the public catalog kept: every version in use, and more. */
const VALIDATORS_KEPT = 200;

/** How soon a refresh that failed (the render service is down) is tried again. */
const RETRY_MS = 1_000;

/**
 * The gateway's view of the catalog: each template looked up through the
 * render service, with its data schema compiled once per version.
 *
 * Only the public catalog is cached by id. An account's own template, and a
 * pinned version of any template, is looked up at every admission (`resolve`):
 * a new version is used by the next request on every gateway at once. A
 * create that names a public id is refused, so a public id found in the cache
 * is the template the account means, unless the catalog marks it `shadowed`
 * (a built-in added after some account had a template of that id, which for
 * that account still names its own): such an id is looked up with its owner
 * every time.
 *
 * A known template is served from memory. Once its entry is older than
 * ttlMs, the next request still gets it and starts a refresh in the
 * background: a new version shows up within about ttlMs, and requests for
 * known templates neither wait on the render service nor fail while it
 * restarts (their jobs queue until it is back). A template the refresh finds
 * gone is forgotten; a refresh that fails is tried again a second later.
 */
export class TemplateDirectory {
  private readonly byId = new Map<string, CachedTemplate>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly catalog: renderV1.TemplateCatalogServiceClient,
    private readonly ttlMs = 10_000,
  ) {}

  /** A public template, from the cache (the gallery's pages). */
  get(id: string): Promise<TemplateInfo> {
    const cached = this.byId.get(id);
    if (!cached) return this.lookUp(id);
    if (!cached.refreshing && Date.now() >= cached.refreshAt) this.refresh(id, cached);
    return cached.info;
  }

  /**
   * The template a request of `owner` names: the public one from the cache
   * (a public template found here is cached from then on), otherwise (an own
   * template, or a pinned `version`) asked of the render service now. Another
   * account's template is not found.
   */
  async resolve(id: string, owner: string, version = 0): Promise<TemplateInfo> {
    if (version) return this.fetch(id, owner, version);
    const cached = await this.byId.get(id)?.info.catch(() => undefined);
    if (cached && !cached.template.shadowed) return this.get(id);
    const info = await this.fetch(id, owner);
    if (!info.template.owner && !this.byId.has(id)) {
      this.byId.set(id, { info: Promise.resolve(info), refreshAt: Date.now() + this.ttlMs, refreshing: false });
    }
    return info;
  }

  private lookUp(id: string): Promise<TemplateInfo> {
    const started = Date.now();
    const entry: CachedTemplate = { info: this.fetch(id), refreshAt: Infinity, refreshing: false };
    this.byId.set(id, entry);
    entry.info.then(
      () => (entry.refreshAt = started + this.ttlMs),
      () => {
        if (this.byId.get(id) === entry) this.byId.delete(id);
      },
    );
    return entry.info;
  }

  private refresh(id: string, entry: CachedTemplate): void {
    entry.refreshing = true;
    const started = Date.now();
    this.fetch(id).then(
      (info) => {
        if (this.byId.get(id) === entry) this.byId.set(id, { info: Promise.resolve(info), refreshAt: started + this.ttlMs, refreshing: false });
      },
      (err: unknown) => {
        if (err instanceof AppError && err.code === "TEMPLATE_NOT_FOUND" && this.byId.get(id) === entry) this.byId.delete(id);
        entry.refreshing = false;
        entry.refreshAt = Date.now() + Math.min(RETRY_MS, this.ttlMs);
      },
    );
  }

  private fetch(id: string, owner = "", version = 0): Promise<TemplateInfo> {
    return call(this.catalog, this.catalog.getTemplate, { id, owner, version }).then(({ template }) => {
      if (!template) throw templateNotFound(id);
      return { template, validate: template.owner ? undefined : this.validator(template) };
    });
  }

  private validator(template: renderV1.Template): ValidateFunction {
    const key = `${template.owner}/${template.id}#${template.generation}@${template.version}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const schema = JSON.parse(template.dataSchemaJson) as object;
      validate = ajv.compile(schema);
      // Kept here, not in ajv: two versions may declare the same $id.
      ajv.removeSchema(schema);
      this.validators.set(key, validate);
      for (const oldest of this.validators.keys()) {
        if (this.validators.size <= VALIDATORS_KEPT) break;
        this.validators.delete(oldest);
      }
    }
    return validate;
  }
}

/** Validates data against a public template's schema (ours, run here): 422 naming the failing path. */
export function checkTemplateData(info: TemplateInfo, data: unknown): AppError | undefined {
  if (!info.validate || info.validate(data)) return undefined;
  return dataProblem(info.template.id, info.validate.errors?.[0]);
}
