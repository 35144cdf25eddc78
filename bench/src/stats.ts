export interface RunStats {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  throughput: number;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The least-squares slope of y over x (NaN for fewer than two distinct x). */
export function slope(xs: number[], ys: number[]): number {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const mx = mean(xs);
  const my = mean(ys);
  const sxx = xs.reduce((total, x) => total + (x - mx) ** 2, 0);
  const sxy = xs.reduce((total, x, i) => total + (x - mx) * (ys[i]! - my), 0);
  return sxx > 0 ? sxy / sxx : NaN;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarise(latencies: number[], wallMs: number): RunStats {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    throughput: (sorted.length / wallMs) * 1000,
  };
}

/**
 * Runs `task` with `concurrency` workers until `count` tasks completed
 * (after `warmup` untimed ones per worker). Returns per-task latency.
 */
export async function drive(concurrency: number, count: number, warmup: number, task: (worker: number) => Promise<void>): Promise<RunStats> {
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; i < warmup; i++) await task(w);
    }),
  );
  const latencies: number[] = [];
  const started = performance.now();
  await runTasks(concurrency, count, task, (ms) => latencies.push(ms));
  return summarise(latencies, performance.now() - started);
}

/** `concurrency` workers run `count` tasks between them, each taking the next as it finishes one; `latency` hears each task's time. */
export async function runTasks(concurrency: number, count: number, task: (worker: number) => Promise<unknown>, latency: (ms: number) => void): Promise<void> {
  let issued = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (issued < count) {
        issued++;
        const started = performance.now();
        await task(worker);
        latency(performance.now() - started);
      }
    }),
  );
}
