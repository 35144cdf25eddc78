import { AppError, clientBucket } from "@pressroom/platform";
import type { Context } from "koa";
import { clientIp, type TrustedProxies } from "../client-ip";

/** Client addresses whose windows are kept, and public answers: past these, the least recently used go. */
const MAX_CLIENTS = 20_000;
const MAX_ANSWERS = 1_000;

interface Answer {
  value: Promise<unknown>;
  expires: number;
}

/**
 * What a caller without a key may read (the catalog, a public template, its versions and
 * preview, the gallery's pages) costs the render service nothing once it was read: each answer
 * is kept for `ttlMs` on this replica (a not-found too), and loaded once however many ask
 * meanwhile. And each client address (the IPv4 address, an IPv6 /64; behind trusted proxies,
 * the one they forwarded) makes at most `perMinute` such reads in any 60 s on this replica, past
 * which it gets 429 RATE_LIMITED: a flood of them neither reaches render nor slows rendering.
 */
export class AnonymousReads {
  private readonly windows = new Map<string, number[]>();
  private readonly answers = new Map<string, Answer>();

  constructor(private readonly opts: { perMinute: number; ttlMs: number; trustedProxies: TrustedProxies }) {}

  /** Counts the request against its client's address; 429 RATE_LIMITED (with Retry-After) past the limit. */
  admit(ctx: Context): void {
    const bucket = clientBucket(clientIp(ctx, this.opts.trustedProxies));
    const now = Date.now();
    const window = (this.windows.get(bucket) ?? []).filter((at) => at > now - 60_000);
    this.windows.delete(bucket);
    if (window.length >= this.opts.perMinute) {
      this.windows.set(bucket, window);
      const retryAfterSeconds = Math.max(1, Math.ceil((window[0]! + 60_000 - now) / 1000));
      throw new AppError(
        "RATE_LIMITED",
        "too many requests without a key from this address",
        `Wait ${retryAfterSeconds} s (Retry-After), or send your API key: keyed requests have your plan's own limit.`,
        { retryAfterSeconds },
      );
    }
    window.push(now);
    this.windows.set(bucket, window);
    for (const oldest of this.windows.keys()) {
      if (this.windows.size <= MAX_CLIENTS) break;
      this.windows.delete(oldest);
    }
  }

  /** The public answer `key` names: kept for ttlMs (a template not found too; any other failure is not kept), loaded once meanwhile. */
  cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const kept = this.answers.get(key);
    if (kept && kept.expires > now) return kept.value as Promise<T>;
    const value = load();
    value.catch((err: unknown) => {
      const notFound = err instanceof AppError && err.code === "TEMPLATE_NOT_FOUND";
      if (!notFound && this.answers.get(key)?.value === value) this.answers.delete(key);
    });
    this.answers.delete(key);
    this.answers.set(key, { value, expires: now + this.opts.ttlMs });
    for (const oldest of this.answers.keys()) {
      if (this.answers.size <= MAX_ANSWERS) break;
      this.answers.delete(oldest);
    }
    return value;
  }
}
