import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import path from "node:path";
import { Pressroom, verifyStandardWebhook, verifyWebhookSignature } from "@pressroom/client";
import { DEMO_API_KEY } from "@pressroom/domain";
import { REPO_ROOT } from "./services";
import { ensureListenerCertificate, listenPort } from "./webhook-listener";

/**
 * `npm run webhooks:listen`: an HTTPS receiver for the local stack's callbacks
 * (up.sh's webhook service trusts its certificate and sends loopback callbacks
 * to its port). Prints each delivery, its headers and body, and whether each
 * of its signatures verifies with the webhook secret of PRESSROOM_API_KEY (the
 * demo key by default); answers 204 when one does, 401 otherwise.
 * PRESSROOM_BASE_URL (default http://localhost:8080) is the gateway the secret
 * is read from.
 */

const SHOWN_HEADERS = ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature", "x-service-signature"];

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const port = listenPort(process.env);
  const files = ensureListenerCertificate(process.env.PRESSROOM_WEBHOOKS_LISTEN_DIR ?? path.join(REPO_ROOT, ".data", "webhook-listen"));
  const apiKey = process.env.PRESSROOM_API_KEY || DEMO_API_KEY;
  const client = new Pressroom({ apiKey });
  const readSecret = async () => (await client.webhookSecret()).secret;
  let secret: string;
  try {
    secret = await readSecret();
  } catch (err) {
    throw new Error(
      `could not read the webhook secret from ${client.baseUrl} (is ./scripts/up.sh running? PRESSROOM_BASE_URL, PRESSROOM_API_KEY): ${(err as Error).message}`,
    );
  }

  /** Which of the delivery's signatures verify; the secret is read again once when none does (it may have been rotated). */
  const check = async (rawBody: Buffer, headers: Record<string, string | string[] | undefined>) => {
    const verify = (current: string) => ({
      seed: verifyWebhookSignature(rawBody, headers["x-service-signature"] as string | undefined, current),
      standard: verifyStandardWebhook(rawBody, headers, current),
    });
    let result = verify(secret);
    if (!result.seed && !result.standard) {
      secret = await readSecret().catch(() => secret);
      result = verify(secret);
    }
    return result;
  };

  const server = createServer({ cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      void check(rawBody, req.headers).then(({ seed, standard }) => {
        const verified = seed || standard;
        say(`--> ${req.method ?? "?"} ${req.url ?? ""}  ${new Date().toISOString()}`);
        for (const name of SHOWN_HEADERS) if (req.headers[name] !== undefined) say(`    ${name}: ${String(req.headers[name])}`);
        let body = rawBody.toString("utf8");
        try {
          body = JSON.stringify(JSON.parse(body), null, 2);
        } catch {
          // Not JSON: shown as it came.
        }
        say(body.replace(/^/gm, "    "));
        say(
          `    signature: ${verified ? "verified" : "NOT verified"} ` +
            `(X-Service-Signature ${seed ? "ok" : "fails"}, Standard Webhooks ${standard ? "ok" : "fails"}) -> ${verified ? 204 : 401}`,
        );
        res.writeHead(verified ? 204 : 401).end();
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  say(`webhooks: listening on https://127.0.0.1:${port}, for the local stack (./scripts/up.sh), which trusts ${files.certFile}`);
  say(
    `webhooks: send "webhook_url": "https://127.0.0.1/webhooks" (any path); verifying with the webhook secret of key ${apiKey.slice(0, 12)}… from ${client.baseUrl}`,
  );
  say("webhooks: Ctrl-C stops");
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`webhooks: ${(err as Error).message}\n`);
  process.exit(1);
});
