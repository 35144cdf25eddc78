import type { StorageDeps } from "../deps";
import { storageMetrics } from "./metrics";
import { claimExpired } from "./outputs.repository";

type SweepDeps = Pick<StorageDeps, "db" | "store" | "logger" | "recentOutputs">;

/**
 * Deletes outputs past their expiry: claims a batch by marking the rows
 * deleted (downloads answer 410 from that moment), then deletes their
 * objects from the store and this replica's recent outputs. An object whose
 * delete fails is still removed by the bucket's own max age.
 */
export async function sweepExpired(deps: SweepDeps, batch = 500): Promise<number> {
  const claimed = await claimExpired(deps.db, new Date(), batch);
  for (const outputId of claimed) {
    deps.recentOutputs.delete(outputId);
    await deps.store.delete(outputId).catch((err: unknown) => deps.logger.warn({ err, output_id: outputId }, "deleting an expired output failed"));
  }
  storageMetrics.swept(claimed.length);
  return claimed.length;
}

/** Runs sweepExpired every intervalMs on this replica (every replica sweeps; they claim different rows). */
export class ExpirySweep {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: SweepDeps,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      const run = sweepExpired(this.deps).then(
        (deleted) => {
          if (deleted > 0) this.deps.logger.info({ deleted }, "expired outputs deleted");
        },
        (err: unknown) => this.deps.logger.warn({ err }, "output sweep failed"),
      );
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }, this.intervalMs);
  }

  /** No sweep starts any more; resolves when the ones running have ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.running);
  }
}
