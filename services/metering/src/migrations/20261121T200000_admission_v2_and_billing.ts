import { sql, type Kysely } from "kysely";

/**
 * Admission v2 and billing.
 *
 * - `charges`: one row per render admitted (job → key, period), so a refund
 *   is applied at most once per job and still finds its period after the
 *   job's slot was reclaimed by the lease timeout.
 * - `admit()` takes the month from the database clock (the same clock as the
 *   rate window and the leases, whichever metering replica calls it), is
 *   idempotent per job id (a retried Admit of the same job charges once), and
 *   can decide again for a request already counted in the rate window
 *   (p_counted), after metering freed the slots of jobs that had finished.
 * - `checkout_sessions` and `stripe_events` for billing.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("charges")
    .addColumn("job_id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("period_start", "date", (c) => c.notNull())
    .addColumn("charged_at", "timestamptz", (c) => c.notNull())
    .addColumn("refunded_at", "timestamptz")
    .execute();
  await db.schema.createIndex("charges_charged_at").on("charges").column("charged_at").execute();
  await db.schema.createIndex("rate_events_at").on("rate_events").column("at").execute();
  await db.schema.createIndex("processed_events_at").on("processed_events").column("processed_at").execute();

  await db.schema
    .createTable("checkout_sessions")
    .addColumn("session_id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull().check(sql`provider in ('local', 'stripe')`))
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("from_plan", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("open")
        .check(sql`status in ('open', 'completed')`),
    )
    .addColumn("checkout_url", "text", (c) => c.notNull())
    .addColumn("provider_session_id", "text", (c) => c.unique())
    .addColumn("confirm_token_hash", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("completed_at", "timestamptz")
    .execute();
  await db.schema.createIndex("checkout_sessions_key").on("checkout_sessions").column("key_id").execute();

  await db.schema
    .createTable("stripe_events")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await sql`drop function if exists admit(text, int, bigint, int, text, int, date)`.execute(db);
  await ADMIT_V2.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists admit(text, int, bigint, int, text, int, boolean)`.execute(db);
  await ADMIT_V1.execute(db);
  for (const table of ["stripe_events", "checkout_sessions", "charges"]) await db.schema.dropTable(table).execute();
  await db.schema.dropIndex("rate_events_at").execute();
  await db.schema.dropIndex("processed_events_at").execute();
}

/**
 * The admission decision in one round trip, serialised per key by a
 * transaction-scoped advisory lock, so it is exact with any number of
 * metering replicas: sliding 60-second rate window (every call counts unless
 * refused for rate), then for a render the monthly quota (UTC calendar month
 * of the database clock), then the concurrency slots (reclaiming the leases
 * of lost jobs). A render admitted takes one quota unit, one slot and one
 * charge row, all in the same statement. With p_counted the request is
 * already in the window (a second decision for the same request): it is
 * neither refused for rate nor counted again.
 */
const ADMIT_V2 = sql`
create function admit(
  p_key text, p_rate_limit int, p_renders_limit bigint, p_concurrency int, p_job text, p_lease_seconds int,
  p_counted boolean default false
) returns table (decision text, rate_remaining int, rate_reset int, retry_after int)
language plpgsql
set search_path from current
as $$
declare
  v_now timestamptz;
  v_period date;
  v_count int;
  v_oldest timestamptz;
  v_used bigint;
  v_slots int;
  v_reset int;
begin
  perform pg_advisory_xact_lock(hashtextextended('metering:' || p_key, 0));
  -- Read the clock after the lock: a call that waited decides at its own time.
  v_now := clock_timestamp();
  v_period := date_trunc('month', v_now at time zone 'UTC')::date;

  delete from rate_events where key_id = p_key and at <= v_now - interval '60 seconds';
  select count(*), min(at) into v_count, v_oldest from rate_events where key_id = p_key;
  if not p_counted then
    if v_count >= p_rate_limit then
      v_reset := greatest(1, ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)))::int);
      return query select 'rate_limited'::text, 0, v_reset, v_reset;
      return;
    end if;
    insert into rate_events (key_id, at) values (p_key, v_now);
    v_count := v_count + 1;
  end if;
  v_reset := greatest(1, ceil(extract(epoch from (coalesce(v_oldest, v_now) + interval '60 seconds' - v_now)))::int);
  if coalesce(p_job, '') = '' then
    return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
    return;
  end if;

  -- The same job admitted again (a retried call): it already holds its unit and slot.
  if exists (select 1 from charges where job_id = p_job and key_id = p_key) then
    return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
    return;
  end if;

  select renders_used into v_used from usage_periods where key_id = p_key and period_start = v_period;
  if coalesce(v_used, 0) >= p_renders_limit then
    return query select 'quota_exceeded'::text, greatest(p_rate_limit - v_count, 0), v_reset,
      greatest(1, ceil(extract(epoch from (((v_period + interval '1 month')::timestamp at time zone 'UTC') - v_now)))::int);
    return;
  end if;

  delete from slots where key_id = p_key and lease_expires_at < v_now;
  select count(*) into v_slots from slots where key_id = p_key;
  if v_slots >= p_concurrency then
    return query select 'concurrency_exceeded'::text, greatest(p_rate_limit - v_count, 0), v_reset, 1;
    return;
  end if;

  insert into slots (job_id, key_id, period_start, acquired_at, lease_expires_at)
    values (p_job, p_key, v_period, v_now, v_now + make_interval(secs => p_lease_seconds));
  insert into charges (job_id, key_id, period_start, charged_at) values (p_job, p_key, v_period, v_now);
  insert into usage_periods as u (key_id, period_start, renders_used) values (p_key, v_period, 1)
    on conflict (key_id, period_start) do update set renders_used = u.renders_used + 1;
  return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
end
$$`;

/** The function of 20261121T183000, restored by down(). */
const ADMIT_V1 = sql`
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
