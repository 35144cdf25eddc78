import type { Migration } from "kysely";
import * as createMetering from "./20261121T183000_create_metering";
import * as admissionV2AndBilling from "./20261121T200000_admission_v2_and_billing";
import * as idempotencyKeys from "./20261123T110000_idempotency_keys";
import * as admitUnits from "./20261126T160000_admit_units";
import * as previewAdmission from "./20261127T230000_preview_admission";
import * as batches from "./20261128T023344_batches";
import * as testMode from "./20261128T054307_test_mode";
import * as batchEnds from "./20261128T054441_batch_ends";

/** Every migration of the metering schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T183000_create_metering": createMetering,
  "20261121T200000_admission_v2_and_billing": admissionV2AndBilling,
  "20261123T110000_idempotency_keys": idempotencyKeys,
  "20261126T160000_admit_units": admitUnits,
  "20261127T230000_preview_admission": previewAdmission,
  "20261128T023344_batches": batches,
  "20261128T054307_test_mode": testMode,
  "20261128T054441_batch_ends": batchEnds,
};
