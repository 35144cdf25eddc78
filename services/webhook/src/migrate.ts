import { runMigrateEntrypoint } from "@pressroom/platform";
import { migrations } from "./migrations";

void runMigrateEntrypoint("webhook", migrations);
