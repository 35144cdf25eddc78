import { baseConfigShape, env, grpcServiceShape, jobBoundsShape, loadConfig, outputStoreShape, sealingKeyShape, z } from "@pressroom/platform/config";

/** Settings of Chromium itself, read both by the worker (when it launches Chromium) and by chromium-main.ts. */
const chromiumShape = {
  /** Default: the engine's DEFAULT_CHROMIUM_PATH (Debian's chromium-headless-shell); the full browser's binary works too, at about twice the CPU per render. */
  CHROMIUM_PATH: z.string().min(1).optional(),
  /**
   * Chromium's own sandbox. It needs CAP_SYS_CHROOT (or unprivileged user namespaces), which a
   * pod with every capability dropped under the RuntimeDefault seccomp profile does not have;
   * off, each job is still isolated in its own browser context and the pod is the boundary.
   */
  RENDER_CHROMIUM_SANDBOX: env.bool(false),
  /**
   * The data (heap, ArrayBuffers, WebAssembly memory) each Chromium process may take, in MiB: its
   * RLIMIT_DATA, which every renderer inherits. A document past it fails naming it, and cannot take
   * the memory the browser other keys' jobs share needs.
   */
  RENDER_CHROMIUM_PROCESS_MEMORY_MIB: env.int(2048, 256),
};

export const configSchema = z.object({
  ...grpcServiceShape("render"),
  ...sealingKeyShape,
  STORAGE_ADDR: env.grpcAddr("storage"),
  /** Storage's output bucket (its OUTPUT_BUCKET): render writes an output's bytes there, and storage names them. */
  OUTPUT_BUCKET: outputStoreShape.OUTPUT_BUCKET,
  ...chromiumShape,
  /**
   * The DevTools endpoint of a Chromium run by `dist/chromium-main.js` (the chart runs it in a
   * container of its own in the render pod, as another user), e.g. http://127.0.0.1:9222. Unset:
   * the worker launches Chromium itself, over a pipe, with a minimal environment.
   */
  RENDER_CHROMIUM_URL: z.string().url().optional(),
  /**
   * The loopback endpoint of the post-processing process run by `dist/postprocess-main.js` (the
   * chart runs it in a container of its own in the render pod, as another user, with no Secret),
   * e.g. http://127.0.0.1:9223. Unset: the worker starts that process itself, as a child with an
   * environment of a few allowed names and, when the worker runs as root, as the user nobody.
   */
  RENDER_POSTPROCESS_URL: z.string().url().optional(),
  /** Renders one worker runs at once; each has its own browser context. */
  RENDER_SLOTS: env.int(2, 1),
  /** Windows kept beyond the slots for API keys that rendered: each key's next job reuses its own (reset), never another key's. */
  RENDER_KEY_WINDOWS: env.int(8, 0),
  /**
   * RENDER_DEADLINE_MS, and RENDER_MAX_QUEUE_WAIT_MS (the provisioning step's too): a job not ended
   * by its acceptance plus both plus a margin is ended failed when metering asks (worker/expiry.ts).
   */
  ...jobBoundsShape,
  /** A template preview's own deadline (a save's, a preview.png's), template expansion included: past it the preview fails RENDER_FAILED, charged. */
  RENDER_PREVIEW_DEADLINE_MS: env.int(10_000, 1_000),
  /** Previews this process renders at once (its other slots stay with the render queue), and previews that may wait (past it: refused, retry). */
  RENDER_PREVIEW_SLOTS: env.int(1, 1),
  RENDER_PREVIEW_QUEUE: env.int(8, 0),
  RENDER_MAX_PAGES: env.int(500, 1),
  RENDER_MAX_OUTPUT_BYTES: env.int(50 * 1024 * 1024, 1024),
  /** The largest HTML a template may expand to (UTF-8 bytes); past it the job fails 422 RENDER_FAILED. */
  RENDER_MAX_HTML_BYTES: env.int(16 * 1024 * 1024, 1024),
  SUBREQUEST_TIMEOUT_MS: env.int(5_000, 100),
  /** Bytes all of one job's sub-resources (images, fonts, stylesheets…) may add up to; past it the job fails 422 RENDER_FAILED. */
  RENDER_SUBRESOURCE_BUDGET_BYTES: env.int(50 * 1024 * 1024, 1024),
  /**
   * Ports documents' sub-resources may reach (comma-separated); a request to any other is refused
   * by the fetcher (a document cannot speak HTTP to public SMTP or Redis servers). The chart's
   * render egress NetworkPolicy opens the same ports, from one value (render.subresourcePorts).
   */
  RENDER_SUBRESOURCE_PORTS: z
    .string()
    .default("80,443")
    .transform((text) =>
      text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean)
        .map(Number),
    )
    .pipe(z.array(z.number().int().min(1).max(65535)).min(1)),
  /** Development and tests only: lets documents load from loopback addresses. */
  RENDER_ALLOW_LOOPBACK: env.bool(false),
  /** Development and tests only: extra CA (PEM file) trusted for documents' sub-requests. */
  RENDER_EXTRA_CA_FILE: z.string().optional(),
  /**
   * A succeeded sync job's output up to this size travels in the worker's announcement to the
   * waiting gateway, which answers with it and serves its first downloads without storage
   * (never more than the NATS server's max_payload allows); 0 announces no outputs.
   */
  RENDER_ANNOUNCED_OUTPUT_MAX_BYTES: env.int(512 * 1024, 0),
  WORKER_NAME: z.string().default(`render-${process.pid}`),
});

export type Config = z.infer<typeof configSchema>;

/** The settings of `dist/chromium-main.js`: Chromium on its own, its DevTools endpoint on loopback. */
export const chromiumHostConfigSchema = z.object({
  LOG_LEVEL: baseConfigShape.LOG_LEVEL,
  ...chromiumShape,
  RENDER_CHROMIUM_PORT: env.port(9222),
});

export type ChromiumHostConfig = z.infer<typeof chromiumHostConfigSchema>;

export const loadRenderConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);

export const loadChromiumHostConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<ChromiumHostConfig> => loadConfig(chromiumHostConfigSchema, source);

/** The settings of `dist/postprocess-main.js`: merging and post-processing (qpdf, Ghostscript, pdf-lib), its endpoint on loopback. */
export const postProcessHostConfigSchema = z.object({
  LOG_LEVEL: baseConfigShape.LOG_LEVEL,
  /** 0: any free port, which the process writes on its standard output (the worker's own child). */
  RENDER_POSTPROCESS_PORT: env.port(9223),
});

export const loadPostProcessHostConfig = (source: NodeJS.ProcessEnv = process.env) => loadConfig(postProcessHostConfigSchema, source);
