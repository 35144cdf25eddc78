import { DEFAULT_DATABASE_URL, postgresAnswers } from "./postgres";

/** Exits 0 when PostgreSQL answers at DATABASE_URL (or the local default). */
void postgresAnswers(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL).then((ok) => process.exit(ok ? 0 : 1));
