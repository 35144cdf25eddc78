import { runMigrateEntrypoint } from "@pressroom/platform";
import { migrations } from "./migrations";

void runMigrateEntrypoint("render", migrations);
