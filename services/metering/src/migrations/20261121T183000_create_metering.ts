import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("rate_events")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("rate_events_key_time").on("rate_events").columns(["key_id", "at"]).execute();

  await db.schema
    .createTable("usage_periods")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("period_start", "date", (c) => c.notNull())
    .addColumn("renders_used", "bigint", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("usage_periods_pk", ["key_id", "period_start"])
    .execute();

  await db.schema
    .createTable("slots")
    .addColumn("job_id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("period_start", "date", (c) => c.notNull())
    .addColumn("acquired_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn("lease_expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("slots_key").on("slots").column("key_id").execute();

  await db.schema
    .createTable("processed_events")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await ADMIT_FUNCTION.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function admit`.execute(db);
  for (const table of ["processed_events", "slots", "usage_periods", "rate_events"]) await db.schema.dropTable(table).execute();
}

/**
 * The admission decision in one round trip, serialised per key by an
 * advisory lock, so it is exact with any number of metering replicas:
 * sliding 60-second rate window, then (for a render) the monthly quota, then
 * the concurrency slots (reclaiming leases of lost jobs).
 */
export const ADMIT_FUNCTION = sql`
create or replace function admit(
  p_key text, p_rate_limit int, p_renders_limit bigint, p_concurrency int,
  p_job text, p_lease_seconds int, p_period date
) returns table (decision text, rate_remaining int, rate_reset int, retry_after int)
language plpgsql
set search_path from current
as $$
declare
  v_now timestamptz;
  v_count int;
  v_oldest timestamptz;
  v_used bigint;
  v_slots int;
  v_reset int;
begin
  perform pg_advisory_xact_lock(hashtextextended('metering:' || p_key, 0));
  v_now := clock_timestamp();
  delete from rate_events where key_id = p_key and at <= v_now - interval '60 seconds';
  select count(*), min(at) into v_count, v_oldest from rate_events where key_id = p_key;
  if v_count >= p_rate_limit then
    v_reset := greatest(1, ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)))::int);
    return query select 'rate_limited'::text, 0, v_reset, v_reset;
    return;
  end if;
  insert into rate_events (key_id, at) values (p_key, v_now);
  v_count := v_count + 1;
  v_reset := greatest(1, ceil(extract(epoch from (coalesce(v_oldest, v_now) + interval '60 seconds' - v_now)))::int);
  if coalesce(p_job, '') = '' then
    return query select 'allowed'::text, p_rate_limit - v_count, v_reset, 0;
    return;
  end if;
  insert into usage_periods (key_id, period_start) values (p_key, p_period) on conflict do nothing;
  select renders_used into v_used from usage_periods where key_id = p_key and period_start = p_period;
  if v_used >= p_renders_limit then
    return query select 'quota_exceeded'::text, p_rate_limit - v_count, v_reset,
      greatest(1, ceil(extract(epoch from (((p_period + interval '1 month')::timestamp at time zone 'UTC') - v_now)))::int);
    return;
  end if;
  delete from slots where key_id = p_key and lease_expires_at < v_now;
  select count(*) into v_slots from slots where key_id = p_key;
  if v_slots >= p_concurrency then
    return query select 'concurrency_exceeded'::text, p_rate_limit - v_count, v_reset, 1;
    return;
  end if;
  insert into slots (job_id, key_id, period_start, acquired_at, lease_expires_at)
    values (p_job, p_key, p_period, v_now, v_now + make_interval(secs => p_lease_seconds));
  update usage_periods set renders_used = renders_used + 1 where key_id = p_key and period_start = p_period;
  return query select 'allowed'::text, p_rate_limit - v_count, v_reset, 0;
end
$$`;
