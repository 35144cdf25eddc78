import { runMigrateEntrypoint } from "@pressroom/platform";
import { migrations } from "./migrations";

void runMigrateEntrypoint("storage", migrations);
