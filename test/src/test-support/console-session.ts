import assert from "node:assert/strict";
import type { Api, ApiResponse, RequestOptions } from "./api";

/**
 * A console session driven over HTTP as the console's pages drive it: signed in with a key, then
 * every request with the session cookie (no Authorization header), the requests that change
 * anything with the session's X-CSRF-Token and this origin.
 */
export class ConsoleSession {
  private constructor(
    private readonly api: Api,
    readonly cookie: string,
    readonly csrfToken: string,
  ) {}

  /** POST /console/session with the key, then GET /console/session for the CSRF token. */
  static async signIn(api: Api, apiKey: string): Promise<ConsoleSession> {
    const signedIn = await api.post("/console/session", { api_key: apiKey });
    assert.equal(signedIn.status, 204, signedIn.text);
    const cookie = sessionCookie(signedIn);
    api.remember(cookie.split("=")[1]!);
    const current = await api.get("/console/session", { headers: { cookie } });
    assert.equal(current.status, 200, current.text);
    return new ConsoleSession(api, cookie, current.json.csrf_token as string);
  }

  /** A request with the cookie; `csrf: false` leaves the token out, `origin` sends another Origin. */
  request(method: string, path: string, options: RequestOptions & { csrf?: boolean; origin?: string } = {}): Promise<ApiResponse> {
    const { csrf = true, origin, ...rest } = options;
    const headers: Record<string, string> = { cookie: this.cookie, ...rest.headers };
    if (csrf && !["GET", "HEAD"].includes(method)) headers["x-csrf-token"] ??= this.csrfToken;
    headers.origin = origin ?? this.api.baseUrl;
    return this.api.request(method, path, { ...rest, headers });
  }

  get(path: string): Promise<ApiResponse> {
    return this.request("GET", path);
  }

  post(path: string, json: unknown, options: { csrf?: boolean; origin?: string } = {}): Promise<ApiResponse> {
    return this.request("POST", path, { json, ...options });
  }
}

/** The `name=value` of the session cookie a response set. */
export function sessionCookie(response: ApiResponse): string {
  const header = response.headers["set-cookie"] ?? "";
  const match = /(pressroom_session=[^;]*)/.exec(header);
  assert.ok(match, `no session cookie in "${header}"`);
  return match[1]!;
}
