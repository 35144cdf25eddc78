/**
 * The read models of the JOBS stream: each key's jobs (job_list), their outcomes per UTC day
 * (job_days) and their callbacks' deliveries, one per attempt (deliveries). The events stay the
 * truth: the models keep the sequence of the last event they applied (read_model_position), and
 * whatever they lack, the projection reads from the stream. Its files: this projector and its
 * feeds (the durable consumer `read-models`, the catch-up loop), the SQL of the write side
 * (projection.repository.ts) and of the read side (queries.ts), the gRPC methods that answer
 * from them (read-models.grpc.ts) and the replay of a delivery (replay.ts).
 */
import { BatchingEventConsumer, consumers, directGet, streams, subjects, type Logger } from "@pressroom/platform";
import { jobEventSpec, storedJobEvent, type StoredJobEvent } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, JsMsg } from "nats";
import type { WebhookDb } from "../db";
import { applyEvent, hasPosition, lockPosition, setPosition } from "./projection.repository";

/** Events applied in one transaction at most. */
const CHUNK = 500;
/**
 * The least time between two batches while events keep coming (BatchingEventConsumer): an event
 * after a quiet interval is in the models at once, and under a steady stream within about this.
 */
const INTERVAL_MS = 250;
/** How often the catch-up loop compares the models' position with the stream's end. */
export const CATCH_UP_INTERVAL_MS = 2_000;

/**
 * Brings the models forward in stream order, one transaction per chunk, under the position's row
 * lock (so replicas, and this replica's feeds, apply every event once, in order). Events it is
 * handed are used as they are; any it was not handed (a lost model starts again at sequence 1, a
 * message another replica holds) is read by direct get.
 */
export class Projector {
  constructor(private readonly deps: { db: Kysely<WebhookDb>; jsm: JetStreamManager; logger: Logger }) {}

  /** Applies every event up to `target` (and past it, within the chunk that reaches it). Returns how many were applied. */
  async advance(target: number, known: ReadonlyMap<number, StoredJobEvent> = new Map()): Promise<number> {
    let applied = 0;
    for (;;) {
      const step = await this.deps.db.transaction().execute(async (trx) => {
        let position = await lockPosition(trx);
        if (position >= target) return { done: true, count: 0 };
        let count = 0;
        while (count < CHUNK && position < target) {
          const handed = known.get(position + 1);
          const next = handed ? { seq: handed.seq, stored: handed } : await this.read(position + 1);
          if (!next) break;
          if (next.stored) await applyEvent(trx, next.stored);
          position = next.seq;
          count++;
        }
        await setPosition(trx, position);
        return { done: count === 0 || position >= target, count };
      });
      applied += step.count;
      if (step.done) return applied;
    }
  }

  /** The first JOBS message at or after `seq` (`stored` absent when it cannot be decoded: logged, skipped); undefined past the end. */
  private async read(seq: number): Promise<{ seq: number; stored?: StoredJobEvent } | undefined> {
    const msg = await directGet(this.deps.jsm, streams.JOBS, { seq, next_by_subj: subjects.allJobs });
    if (!msg) return undefined;
    try {
      return { seq: msg.seq, stored: storedJobEvent(msg) };
    } catch (err) {
      this.deps.logger.error({ err, seq: msg.seq }, "undecodable job event; not projected");
      return { seq: msg.seq };
    }
  }

  /** Up to the stream's last event; a lost model is rebuilt from the start. */
  async catchUp(): Promise<number> {
    const lost = !(await hasPosition(this.deps.db));
    const { state } = await this.deps.jsm.streams.info(streams.JOBS);
    const applied = await this.advance(state.last_seq);
    if (lost && applied > 0) this.deps.logger.info({ events: applied, lastSeq: state.last_seq }, "read models rebuilt from the JOBS stream");
    return applied;
  }
}

/**
 * Feeds the projector from JOBS (durable `read-models`, every event from the start), in batches:
 * a message is acked once the models have applied it (or were already past it).
 */
export class ReadModelConsumer extends BatchingEventConsumer<StoredJobEvent> {
  constructor(private readonly deps: { js: JetStreamClient; projector: Projector; logger: Logger }) {
    super({ js: deps.js, stream: streams.JOBS, consumer: consumers.readModels, concurrency: CHUNK }, jobEventSpec(deps.logger), {
      maxBatch: CHUNK,
      intervalMs: INTERVAL_MS,
    });
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "projecting a job event into the read models failed; will retry");
    msg.nak(1_000);
  }

  protected async applyBatch(events: StoredJobEvent[]): Promise<void> {
    const known = new Map(events.map((stored) => [stored.seq, stored]));
    await this.deps.projector.advance(Math.max(...known.keys()), known);
  }
}

/**
 * Every CATCH_UP_INTERVAL_MS (and at start): the models up to the stream's end. It finds what the
 * consumer cannot bring: a model lost (its tables emptied, or made anew) while the events it held
 * were acked long ago, which it then rebuilds from the stream's first event.
 */
export class CatchUpLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: { projector: Projector; logger: Logger }) {}

  start(): void {
    const run = () => {
      this.running ??= this.deps.projector
        .catchUp()
        .then(
          () => undefined,
          (err: unknown) => this.deps.logger.warn({ err }, "read model catch-up failed; the next one will retry"),
        )
        .finally(() => (this.running = undefined));
    };
    run();
    this.timer = setInterval(run, CATCH_UP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
