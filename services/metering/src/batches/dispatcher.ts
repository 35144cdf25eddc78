import { jobEventsV1 } from "@pressroom/contracts";
import { publishEvent, subjects, type Logger } from "@pressroom/platform";
import { planOf } from "@pressroom/domain";
import { sql, type Kysely } from "kysely";
import type { JetStreamClient } from "nats";
import type { MeteringDb } from "../db";
import { keysWaiting, lockKey } from "./batches.repository";

export interface BatchDispatcherDeps {
  db: Kysely<MeteringDb>;
  js: JetStreamClient;
  logger: Logger;
  leaseSeconds: number;
  /** How often every key's waiting items are looked at (a kick after a slot frees is the usual path). */
  intervalMs: number;
}

/**
 * Sends a key's waiting batch items to the RENDER queue as its concurrency slots free up: under
 * the key's admission lock (the lock admit() takes, so a render admitted meanwhile and the
 * dispatch never together exceed the plan), as many items as the key has free slots, oldest
 * batch first, each given a slot (lease as any job's) and its command published, in one
 * transaction: a publish that fails rolls the dispatch back, and a dispatch whose commit is lost
 * is published again later (the job id is the message id; the worker drops a command of a job
 * that ended). A key's batch thus holds at most its concurrency in the RENDER queue, which is
 * first in, first out: another key's job waits behind at most that many of its items.
 *
 * Kicked for a key when a batch is admitted and when one of its items ends; a timer looks at
 * every key with waiting items, for what a kick missed (another replica's slot freed, a crash).
 */
export class BatchDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(private readonly deps: BatchDispatcherDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      keysWaiting(this.deps.db).then(
        (keys) => keys.forEach((key) => this.kick(key)),
        (err: unknown) => this.deps.logger.warn({ err }, "could not list the keys with waiting batch items"),
      );
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.running.values());
  }

  /** Dispatches the key's next items now (once more after the current pass, if one is running). */
  kick(keyId: string): void {
    if (this.running.has(keyId)) {
      this.again.add(keyId);
      return;
    }
    const run = this.dispatch(keyId)
      .then(
        (sent) => {
          if (sent > 0) this.deps.logger.debug({ keyId, sent }, "batch items dispatched");
        },
        (err: unknown) => this.deps.logger.warn({ err, keyId }, "could not dispatch batch items; the next pass retries"),
      )
      .finally(() => {
        this.running.delete(keyId);
        if (this.again.delete(keyId)) this.kick(keyId);
      });
    this.running.set(keyId, run);
  }

  /** One pass for a key; returns how many items it dispatched. */
  async dispatch(keyId: string): Promise<number> {
    const { db, js, leaseSeconds } = this.deps;
    return db.transaction().execute(async (trx) => {
      await lockKey(trx, keyId);
      await trx
        .deleteFrom("slots")
        .where("key_id", "=", keyId)
        .where("lease_expires_at", "<", sql<Date>`clock_timestamp()`)
        .execute();
      const held = await trx
        .selectFrom("slots")
        .select(sql<number>`count(*)::int`.as("n"))
        .where("key_id", "=", keyId)
        .executeTakeFirstOrThrow();
      const next = await trx
        .selectFrom("batch_items as i")
        .innerJoin("batches as b", "b.batch_id", "i.batch_id")
        .innerJoin("charges as c", "c.job_id", "i.job_id")
        .select(["i.batch_id", "i.idx", "i.job_id", "i.command", "b.plan", sql<string>`c.period_start::text`.as("period")])
        .where("i.key_id", "=", keyId)
        .where("i.status", "=", "queued")
        // Batch ids sort by their creation time: the oldest batch's items in the order of the waiting-items
        // index, so a pass reads the few it dispatches, not every waiting item of the key.
        .orderBy("i.batch_id")
        .orderBy("i.idx")
        .limit(planOf("business").concurrentRenders)
        .execute();
      if (next.length === 0) return 0;
      const free = Math.max(0, planOf(next[0]!.plan).concurrentRenders - held.n);
      const items = next.slice(0, free);
      for (const item of items) {
        await sql`insert into slots (job_id, key_id, period_start, acquired_at, lease_expires_at)
          values (${item.job_id}, ${keyId}, ${item.period}::date, clock_timestamp(), clock_timestamp() + make_interval(secs => ${leaseSeconds}))`.execute(trx);
        await trx
          .updateTable("batch_items")
          .set({ status: "running", dispatched_at: sql<Date>`clock_timestamp()`, command: null })
          .where("batch_id", "=", item.batch_id)
          .where("idx", "=", item.idx)
          .execute();
      }
      await Promise.all(items.map((item) => publishCommand(js, item.job_id, item.command ?? Buffer.alloc(0), false)));
      return items.length;
    });
  }
}

/**
 * Publishes a batch item's render command. Its acceptance is dated now: the worker restores an
 * acceptance the gateway could not append only from a fresh command. `cancelled` asks render
 * to end the job (CANCELLED) without rendering it.
 */
export async function publishCommand(js: JetStreamClient, jobId: string, encoded: Uint8Array, cancelled: boolean): Promise<void> {
  const command = jobEventsV1.RenderCommand.decode(encoded);
  if (command.accepted) command.accepted.time = new Date().toISOString();
  command.cancelled = cancelled;
  await publishEvent(js, {
    subject: subjects.renderRequested,
    spanSubject: subjects.renderRequested,
    msgId: jobId,
    type: "render.requested",
    data: jobEventsV1.RenderCommand.encode(command).finish(),
  });
}
