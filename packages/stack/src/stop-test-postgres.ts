import path from "node:path";
import { stopPrivatePostgres } from "./postgres";
import { REPO_ROOT } from "./services";

stopPrivatePostgres(path.join(REPO_ROOT, ".data", "test-postgres"));
