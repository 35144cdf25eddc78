import { createRequire } from "node:module";
import path from "node:path";
import { REPO_ROOT } from "@pressroom/stack";
import type { Exchange } from "./api";

interface AjvError {
  instancePath: string;
  message?: string;
  params: unknown;
}
interface ValidateFunction {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}
interface Ajv {
  addKeyword(keyword: string): unknown;
  addSchema(schema: object): unknown;
  compile(schema: object): ValidateFunction;
  errorsText(errors?: AjvError[] | null): string;
}

/**
 * The gateway's own ajv 8 (draft 2020-12) and ajv-formats, loaded from the
 * gateway's dependencies: the e2e package declares no validator of its own,
 * and the repository root's ajv is eslint's v6.
 */
const gatewayRequire = createRequire(path.join(REPO_ROOT, "services", "gateway", "package.json"));
const { Ajv2020 } = gatewayRequire("ajv/dist/2020") as { Ajv2020: new (options: object) => Ajv };
const addFormats = (gatewayRequire("ajv-formats") as { default: (ajv: Ajv) => void }).default;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = "https://pressroom.invalid/openapi.json";
const DOCUMENT_KEYWORDS = ["openapi", "info", "servers", "tags", "security", "paths", "webhooks", "components"];

function pointer(segments: string[]): string {
  return segments.map((part) => encodeURIComponent(part.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");
}

/**
 * Checks real HTTP exchanges against the served OpenAPI document: the path
 * and method are documented (or the answer is the documented 404/405), the
 * status is documented for the operation, the documented required headers
 * are there and match their schemas, the content type is documented, and the
 * JSON body validates against the documented schema (ajv, draft 2020-12, the
 * document's own schemas in place). A request the API accepted (2xx) must also
 * satisfy the documented request schema.
 */
export class OpenApiChecker {
  private readonly ajv: Ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { path: string; pattern: RegExp }[];

  constructor(readonly doc: Json) {
    addFormats(this.ajv);
    for (const keyword of DOCUMENT_KEYWORDS) this.ajv.addKeyword(keyword);
    this.ajv.addSchema({ ...doc, $id: BASE });
    this.templates = Object.keys(doc.paths as Json)
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === "{" || c === "}" ? c : `\\${c}`)).replace(/\{[^}]+\}/g, "[^/]+")}$`),
      }))
      // Literal paths before templated ones.
      .sort((a, b) => Number(a.path.includes("{")) - Number(b.path.includes("{")));
  }

  static async fetch(baseUrl: string): Promise<OpenApiChecker> {
    const response = await fetch(`${baseUrl}/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
    return new OpenApiChecker((await response.json()) as Json);
  }

  private validator(segments: string[]): ValidateFunction {
    const ref = `${BASE}#/${pointer(segments)}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  /** Follows a local $ref; returns the node and its location. */
  private deref(node: Json, segments: string[]): { node: Json; segments: string[] } {
    if (typeof node?.$ref !== "string") return { node, segments };
    const target = (node.$ref as string)
      .slice(2)
      .split("/")
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
    return this.deref(
      target.reduce<Json>((n, part) => n?.[part], this.doc),
      target,
    );
  }

  /** Validates a value against a schema of components/schemas. */
  validateSchema(name: string, value: unknown): string[] {
    const validate = this.validator(["components", "schemas", name]);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
  }

  /**
   * The documented path of a request: a literal one before a templated one, and among those that
   * match (POST /v1/templates/preview, GET /v1/templates/{id}) the one that documents `method`.
   */
  matchPath(pathname: string, method?: string): string | undefined {
    const matching = this.templates.filter((t) => t.pattern.test(pathname)).map((t) => t.path);
    return matching.find((path) => method && (this.doc.paths[path] as Json)[method]) ?? matching[0];
  }

  /** The methods documented for a request path: those of every documented path it matches. */
  private methodsOf(pathname: string): string[] {
    const matching = this.templates.filter((t) => t.pattern.test(pathname));
    return [...new Set(matching.flatMap((t) => Object.keys(this.doc.paths[t.path] as Json).map((m) => m.toUpperCase())))];
  }

  /** The problems of one exchange; empty when it matches the document. */
  check(x: Exchange): string[] {
    const pathname = new URL(x.path, "http://gateway").pathname;
    const where = `${x.method} ${x.path.replace(/([?&]sig=)[^&]*/, "$1…").slice(0, 120)} → ${x.status}`;
    const path = this.matchPath(pathname, x.method === "HEAD" ? "get" : x.method.toLowerCase());
    if (!path) {
      if (x.status !== 404) return [`${where}: undocumented path answered ${x.status}, not 404`];
      return this.checkResponse(where, { $ref: "#/components/responses/NotFound" }, [], x);
    }
    const item = this.doc.paths[path] as Json;
    const documented = this.methodsOf(pathname);
    const op = item[x.method === "HEAD" ? "get" : x.method.toLowerCase()] as Json | undefined;
    if (!op) {
      const allow = (x.headers.allow ?? "")
        .split(",")
        .map((m) => m.trim())
        .filter((m) => m !== "HEAD" && m !== "OPTIONS")
        .sort();
      const problems =
        allow.join(",") === [...documented].sort().join(",") ? [] : [`${where}: Allow "${x.headers.allow}" is not the documented ${documented.join(", ")}`];
      if (x.method === "OPTIONS") return x.status === 204 ? problems : [...problems, `${where}: OPTIONS answered ${x.status}, not 204`];
      if (x.status !== 405) return [...problems, `${where}: an undocumented method answered ${x.status}, not 405`];
      return [...problems, ...this.checkResponse(where, { $ref: "#/components/responses/MethodNotAllowed" }, [], x)];
    }
    const method = x.method === "HEAD" ? "get" : x.method.toLowerCase();
    const responses = op.responses as Json;
    const status = String(x.status);
    const key = [status, `${status[0]}XX`, "default"].find((k) => responses[k]);
    if (!key) return [`${where}: status ${status} is not documented for ${method.toUpperCase()} ${path} (documented: ${Object.keys(responses).join(", ")})`];
    const problems = this.checkResponse(where, responses[key] as Json, ["paths", path, method, "responses", key], x);
    const requestSchema = (op.requestBody as Json | undefined)?.content?.["application/json"]?.schema;
    if (requestSchema && x.status < 300 && x.requestJson !== undefined) {
      const validate = this.validator(["paths", path, method, "requestBody", "content", "application/json", "schema"]);
      if (!validate(x.requestJson)) problems.push(`${where}: the API accepted a request body the document rejects: ${this.ajv.errorsText(validate.errors)}`);
    }
    return problems;
  }

  private checkResponse(where: string, raw: Json, rawSegments: string[], x: Exchange): string[] {
    const { node: response, segments } = this.deref(raw, rawSegments);
    const problems: string[] = [];
    for (const [name, rawHeader] of Object.entries((response.headers ?? {}) as Json)) {
      const { node: header, segments: headerSegments } = this.deref(rawHeader as Json, [...segments, "headers", name]);
      const value = x.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      if (header.schema) {
        const validate = this.validator([...headerSegments, "schema"]);
        const typed = header.schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
        if (!validate(typed)) problems.push(`${where}: header ${name}: "${value}" ${this.ajv.errorsText(validate.errors)}`);
      }
    }
    const content = response.content as Json | undefined;
    if (!content) {
      if (x.body.length > 0) problems.push(`${where}: the document says no body, got ${x.body.length} bytes`);
      return problems;
    }
    const type = (x.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (!content[type]) return [...problems, `${where}: content type "${type}" is not documented (${Object.keys(content).join(", ")})`];
    if (x.method === "HEAD" || !/json$/.test(type) || !content[type].schema) return problems;
    let body: unknown;
    try {
      body = JSON.parse(x.body.toString("utf8"));
    } catch {
      return [...problems, `${where}: the body is not JSON`];
    }
    const validate = this.validator([...segments, "content", type, "schema"]);
    if (!validate(body))
      problems.push(`${where}: body ${x.body.toString("utf8").slice(0, 300)} does not match the document: ${this.ajv.errorsText(validate.errors)}`);
    return problems;
  }

  /** Checks every exchange; returns all problems and the operations and statuses covered. */
  checkAll(exchanges: Exchange[]): { problems: string[]; covered: Set<string> } {
    const problems: string[] = [];
    const covered = new Set<string>();
    for (const x of exchanges) {
      problems.push(...this.check(x));
      const path = this.matchPath(new URL(x.path, "http://gateway").pathname, x.method === "HEAD" ? "get" : x.method.toLowerCase());
      covered.add(`${x.method} ${path ?? "(unknown path)"} ${x.status}`);
    }
    return { problems, covered };
  }
}
