import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const at = (...parts) => path.join(ROOT, ...parts);
const foldersIn = (dir) =>
  readdirSync(at(dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

/** The services: each its own deployable. */
const SERVICES = foldersIn("services");
/** What the gateway's features share besides the files at the top of src/: the access checks (auth, admission, idempotency, previews) and customers' data schemas. */
const GATEWAY_SHARED = ["access", "schemas"];
const GATEWAY_FEATURES = foldersIn("services/gateway/src").filter((name) => !GATEWAY_SHARED.includes(name));

/**
 * The walls of the house, kept by lint (each is shown to bite on a planted violation by
 * test/src/lint-walls.test.ts). Paths are resolved, so a wall holds for a relative import
 * and for a package's name alike (@pressroom/render/engine is services/render).
 */
const WALLS = [
  // No service imports another service: they talk gRPC and NATS, through packages/contracts.
  ...SERVICES.map((service) => ({
    target: at("services", service),
    from: SERVICES.filter((other) => other !== service).map((other) => at("services", other)),
    message: "A service imports no other service: what they share is a package (packages/), what they say to each other a contract (proto/).",
  })),
  // The render engine imports nothing above it: not the worker, the producer, the catalog, post-processing or the service's wiring.
  {
    target: at("services/render/src/engine"),
    from: at("services/render/src"),
    except: ["./engine", "./test-support"],
    message: "The render engine imports nothing from the rest of render (worker, producer, catalog, postprocess): they use it, not the reverse.",
  },
  // A gateway feature imports the shared modules (src/*.ts, access/) and its own folder, never another feature's.
  ...GATEWAY_FEATURES.map((feature) => ({
    target: at("services/gateway/src", feature),
    from: GATEWAY_FEATURES.filter((other) => other !== feature).map((other) => at("services/gateway/src", other)),
    message: "A gateway feature imports only shared modules (the files of src/, access/, schemas/) and its own folder: move what two features share into one.",
  })),
];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/src/gen/**", "**/.data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".js", ".mjs", ".cjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
      "import-x/resolver-next": [createTypeScriptImportResolver({ alwaysTryTypes: true })],
      // Another package's build is outside the module graph a cycle is looked for in (turbo refuses cycles between packages).
      "import-x/external-module-folders": ["node_modules", "dist"],
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      // Prettier wraps code at 160 columns; this holds what it cannot wrap (comments, long expressions) to the same limit.
      "max-len": ["error", { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
      "max-lines": ["error", { max: 400 }],
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": ["error", { zones: WALLS }],
    },
  },
  { files: ["**/*.test.ts", "test/**", "bench/**", "packages/stack/**"], rules: { "no-console": "off" } },
  // The cross-service suites: one stack per file, so a file is as long as what one stack is used to check.
  { files: ["test/src/**"], rules: { "max-lines": "off" } },
  // The platform kit knows nothing of documents: the domain is built on it, never the reverse.
  { files: ["packages/platform/**"], rules: { "no-restricted-imports": ["error", { paths: ["@pressroom/domain"], patterns: ["@pressroom/domain/*"] }] } },
  // Scripts the gateway's pages serve to browsers as they are.
  {
    files: ["services/gateway/src/gallery/assets/*.mjs"],
    languageOptions: { globals: { window: "readonly", document: "readonly", fetch: "readonly", URL: "readonly" } },
  },
);
