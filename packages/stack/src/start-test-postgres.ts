import path from "node:path";
import { startPrivatePostgres } from "./postgres";
import { REPO_ROOT } from "./services";

/** Starts the tests' private PostgreSQL under .data/test-postgres and prints its URL. */
startPrivatePostgres(path.join(REPO_ROOT, ".data", "test-postgres")).then(
  (pg) => process.stdout.write(`${pg.url}\n`),
  (err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  },
);
