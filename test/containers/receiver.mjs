// The container suite's webhook receiver (test/src/containers.e2e.test.ts): HTTPS on
// 127.0.0.1:8443 in the webhook container's network namespace, with the certificate the webhook
// service trusts (WEBHOOK_EXTRA_CA_FILE) and reaches by WEBHOOK_DEV_TARGET_PORT. It answers 200
// and prints each callback as one JSON line on stdout, which the suite reads.
import { readFileSync } from "node:fs";
import { createServer } from "node:https";

const dir = process.argv[2];
const server = createServer({ key: readFileSync(`${dir}/key.pem`), cert: readFileSync(`${dir}/cert.pem`) }, (request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const callback = { path: request.url, headers: request.headers, rawBody: Buffer.concat(chunks).toString("utf8") };
    process.stdout.write(`${JSON.stringify(callback)}\n`);
    response.writeHead(200).end();
  });
});
server.listen(8443, "127.0.0.1", () => process.stdout.write("receiver listening\n"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
