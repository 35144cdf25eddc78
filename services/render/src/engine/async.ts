/** For a promise whose failure is handled elsewhere or does not matter (a CDP call on a page going away). */
export const noop = (): void => {};

/** Rejects after `ms` unless `promise` settled first; the timer does not keep the process alive. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
