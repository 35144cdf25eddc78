import type { webhookV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import { sql, type Kysely, type Selectable } from "kysely";
import type { DeliveryRow, WebhookDb } from "../db";

/** The read models' SQL on the read side: every query is one key's. */

type Db = Kysely<WebhookDb>;

export const MAX_PAGE = 100;
export const MAX_DAYS = 92;

/** A page's cursor: the stream sequence the next page starts below, opaque to clients. */
export function encodeCursor(seq: string | number): string {
  return Buffer.from(`s${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): number | undefined {
  if (!cursor) return undefined;
  const match = /^s(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("latin1"));
  if (!match)
    throw new AppError("PAYLOAD_INVALID", "cursor: not a cursor this list answered", "Send next_cursor from the previous page as it was, or no cursor.");
  return Number(match[1]);
}

/** The page of `rows` (fetched with limit + 1) and the cursor of the next one, "" on the last. */
function page<R>(rows: R[], limit: number, seqOf: (row: R) => string): { rows: R[]; nextCursor: string } {
  const shown = rows.slice(0, limit);
  return { rows: shown, nextCursor: rows.length > limit ? encodeCursor(seqOf(shown.at(-1)!)) : "" };
}

function pageSize(limit: number): number {
  if (limit === 0) return 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new AppError("PAYLOAD_INVALID", `limit: must be an integer from 1 to ${MAX_PAGE}`, `Send limit from 1 to ${MAX_PAGE}, or none for 20.`);
  }
  return limit;
}

/** The key's jobs, newest first. */
export async function listJobs(db: Db, req: webhookV1.ListJobsRequest): Promise<webhookV1.ListJobsResponse> {
  const limit = pageSize(req.limit);
  const before = decodeCursor(req.cursor);
  let query = db.selectFrom("job_list").select(["job_id", "accepted_seq"]).where("key_id", "=", req.keyId);
  if (req.status) query = query.where("status", "=", req.status);
  if (req.kind) query = query.where("kind", "=", req.kind);
  if (req.templateId) query = query.where("template_id", "=", req.templateId);
  if (before !== undefined) query = query.where("accepted_seq", "<", String(before));
  const found = await query
    .orderBy("accepted_seq", "desc")
    .limit(limit + 1)
    .execute();
  const { rows, nextCursor } = page(found, limit, (r) => r.accepted_seq);
  return { jobIds: rows.map((r) => r.job_id), nextCursor };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function parseDay(name: string, value: string): number {
  const ms = DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new AppError("PAYLOAD_INVALID", `${name}: must be a date, YYYY-MM-DD`, "Send from and to as UTC dates, e.g. 2026-12-01.");
  }
  return ms;
}

const DAY_MS = 86_400_000;

/** Every day of [from, to] with the key's jobs that ended on it (zero on days without). */
export async function dailyUsage(db: Db, req: webhookV1.GetDailyUsageRequest): Promise<webhookV1.GetDailyUsageResponse> {
  const from = parseDay("from", req.from);
  const to = parseDay("to", req.to);
  if (to < from) throw new AppError("PAYLOAD_INVALID", "to: is before from", "Send a range whose end is on or after its start.");
  const days = (to - from) / DAY_MS + 1;
  if (days > MAX_DAYS) {
    throw new AppError("PAYLOAD_INVALID", `the range is ${days} days, over the limit of ${MAX_DAYS}`, `Ask for at most ${MAX_DAYS} days at a time.`);
  }
  const rows = await db
    .selectFrom("job_days")
    .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as("date"), "succeeded", "failed", "refunded"])
    .where("key_id", "=", req.keyId)
    .where("day", ">=", sql<Date>`${req.from}::date`)
    .where("day", "<=", sql<Date>`${req.to}::date`)
    .execute();
  const byDate = new Map(rows.map((r) => [r.date, r]));
  return {
    days: Array.from({ length: days }, (_, i) => {
      const date = new Date(from + i * DAY_MS).toISOString().slice(0, 10);
      const row = byDate.get(date);
      return { date, succeeded: row?.succeeded ?? 0, failed: row?.failed ?? 0, refunded: row?.refunded ?? 0 };
    }),
  };
}

export function toDelivery(row: Selectable<DeliveryRow>): webhookV1.Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    jobId: row.job_id,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status ?? 0,
    durationMs: row.duration_ms ?? 0,
    createdAt: row.created_at.toISOString(),
    nextRetryAt: row.next_retry_at?.toISOString() ?? "",
  };
}

/** The key's deliveries (of one job, or all), newest first. */
export async function listDeliveries(db: Db, req: webhookV1.ListDeliveriesRequest): Promise<webhookV1.ListDeliveriesResponse> {
  const limit = pageSize(req.limit);
  const before = decodeCursor(req.cursor);
  let query = db.selectFrom("deliveries").selectAll().where("key_id", "=", req.keyId);
  if (req.jobId) query = query.where("job_id", "=", req.jobId);
  if (before !== undefined) query = query.where("seq", "<", String(before));
  const found = await query
    .orderBy("seq", "desc")
    .limit(limit + 1)
    .execute();
  const { rows, nextCursor } = page(found, limit, (r) => r.seq);
  return { deliveries: rows.map(toDelivery), nextCursor };
}

/** One of the key's deliveries; another key's is not found, like one that does not exist. */
export function findDelivery(db: Db, keyId: string, id: string): Promise<Selectable<DeliveryRow> | undefined> {
  return db.selectFrom("deliveries").selectAll().where("id", "=", id).where("key_id", "=", keyId).executeTakeFirst();
}
