interface Waiter<T, Tag> {
  tag: Tag;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

/**
 * Callers waiting for a value, served strictly in arrival order (`serve`), or
 * each in arrival order with what suits its `tag` (`serveEach`). A waiter whose
 * `signal` aborts leaves the queue and rejects with the signal's reason.
 */
export class WaiterQueue<T, Tag = undefined> {
  private readonly waiters: Array<Waiter<T, Tag>> = [];

  get length(): number {
    return this.waiters.length;
  }

  /** The waiting callers' tags, longest waiting first. */
  get tags(): Tag[] {
    return this.waiters.map((waiter) => waiter.tag);
  }

  /** Resolves with the value `serve` hands over next; rejects if `signal` aborts first. */
  wait(signal?: AbortSignal, tag?: Tag): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter<T, Tag> = {
        tag: tag as Tag,
        resolve: (value) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
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

  /** Hands `value` to the longest waiter; false if no one waits. */
  serve(value: T): boolean {
    const waiter = this.waiters.shift();
    waiter?.resolve(value);
    return waiter !== undefined;
  }

  /** Offers each waiter in turn, longest waiting first, what `pick` finds for its tag; those given a value leave the queue. */
  serveEach(pick: (tag: Tag) => T | undefined): void {
    for (const waiter of [...this.waiters]) {
      const value = pick(waiter.tag);
      if (value === undefined) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(value);
    }
  }

  /** Fails every waiter. */
  rejectAll(err: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }
}

/** A counting semaphore whose waiters are served strictly in arrival order. */
export class FifoSemaphore {
  private active = 0;
  private readonly waiters = new WaiterQueue<() => void>();

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
    return this.waiters.wait(signal);
  }

  /** Fails every waiter (used when the engine closes). */
  rejectAll(err: unknown): void {
    this.waiters.rejectAll(err);
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The permit passes straight to the longest waiter, if any.
      if (!this.waiters.serve(this.releaser())) this.active--;
    };
  }
}
