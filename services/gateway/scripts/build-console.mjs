// Bundles the console's browser app (src/console/web) into dist/console/assets: console.js and
// console.css, with esbuild, from the packages npm installed (no CDN). Run by `npm run build`.
import { build } from "esbuild";

await build({
  entryPoints: { console: "src/console/web/main.tsx" },
  outdir: "dist/console/assets",
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "eof",
  logLevel: "warning",
});
