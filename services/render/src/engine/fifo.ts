interface Waiter {
  grant: () => void;
  reject: (err: unknown) => void;
}

/** A counting semaphore whose waiters are served strictly in arrival order. */
export class FifoSemaphore {
  private active = 0;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly permits: number) {}

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Resolves with a release function once a permit is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.permits && this.waiters.length === 0) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          this.active++;
          resolve(this.releaser());
        },
        reject: (err) => {
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Fails every waiter (used when the engine closes). */
  rejectAll(err: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiters.shift()?.grant();
    };
  }
}
