import { AppError } from "@pressroom/platform";
import { FifoSemaphore } from "../engine";

/**
 * The previews one render process runs: at most `slots` at once (the rest of the engine's slots
 * stay with the render queue's jobs) and at most `maxWaiting` waiting, in arrival order; past
 * that a preview is refused at once (UNAVAILABLE: the gateway answers 500, retry, and refunds it),
 * so a burst of previews cannot pile up on one pod. A waiting preview whose caller goes away
 * leaves the queue.
 */
export class PreviewQueue {
  private readonly permits: FifoSemaphore;

  constructor(private readonly opts: { slots: number; maxWaiting: number }) {
    this.permits = new FifoSemaphore(opts.slots);
  }

  /** Previews rendering now, and waiting. */
  get running(): number {
    return this.permits.inUse;
  }

  get waiting(): number {
    return this.permits.queued;
  }

  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.permits.inUse >= this.opts.slots && this.permits.queued >= this.opts.maxWaiting) {
      throw new AppError("UNAVAILABLE", "too many previews are waiting on this render process", "Retry in a few seconds.", { retryAfterSeconds: 1 });
    }
    const release = await this.permits.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
