import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/src/gen/**", "**/.data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      // Prettier wraps code at 160 columns; this holds what it cannot wrap (comments, long expressions) to the same limit.
      "max-len": ["error", { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  { files: ["**/*.test.ts", "test/**", "bench/**", "packages/stack/**"], rules: { "no-console": "off" } },
  // The platform kit knows nothing of documents: the domain is built on it, never the reverse.
  { files: ["packages/platform/**"], rules: { "no-restricted-imports": ["error", { paths: ["@pressroom/domain"], patterns: ["@pressroom/domain/*"] }] } },
  // Scripts the gateway's pages serve to browsers as they are.
  {
    files: ["services/gateway/src/gallery/assets/*.mjs"],
    languageOptions: { globals: { window: "readonly", document: "readonly", fetch: "readonly", URL: "readonly" } },
  },
);
