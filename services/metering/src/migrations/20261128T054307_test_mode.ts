import { sql, type Kysely } from "kysely";

/**
 * Test mode (issue 46): a render or image request with `"test": true` is stamped TEST and
 * counted against a daily allowance of its own, never against the month's renders.
 *
 * - `test_days`: the test units a key used on a UTC day (a new day starts from none).
 * - `charges.kind` may be 'test'; a test charge's `period_start` is its UTC day, so a refund
 *   gives the units back to the day they were taken from.
 * - `admit()` with `p_kind` 'test' reads and adds to that day's row, `p_renders_limit` being the
 *   daily allowance; refused, it answers the seconds until the next UTC midnight. Slots, the
 *   rate window and the lock are a render's.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("test_days")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("used", "bigint", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`used >= 0`),
    )
    .addPrimaryKeyConstraint("test_days_pk", ["key_id", "day"])
    .execute();
  await sql`alter table charges drop constraint charges_kind_check`.execute(db);
  await sql`alter table charges add constraint charges_kind_check check (kind in ('render', 'preview', 'test'))`.execute(db);
  await sql`drop function if exists admit(text, int, bigint, int, text, int, boolean, int, text)`.execute(db);
  await ADMIT_V5.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists admit(text, int, bigint, int, text, int, boolean, int, text)`.execute(db);
  await ADMIT_V4.execute(db);
  await sql`delete from charges where kind = 'test'`.execute(db);
  await sql`alter table charges drop constraint charges_kind_check`.execute(db);
  await sql`alter table charges add constraint charges_kind_check check (kind in ('render', 'preview'))`.execute(db);
  await db.schema.dropTable("test_days").execute();
}

/** admit() of 20261127T230000 with test jobs (`p_kind` 'test'), counted per UTC day in test_days. */
const ADMIT_V5 = sql`
create function admit(
  p_key text, p_rate_limit int, p_renders_limit bigint, p_concurrency int, p_job text, p_lease_seconds int,
  p_counted boolean default false, p_units int default 1, p_kind text default 'render'
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
  v_day date;
begin
  perform pg_advisory_xact_lock(hashtextextended('metering:' || p_key, 0));
  -- Read the clock after the lock: a call that waited decides at its own time.
  v_now := clock_timestamp();
  v_period := date_trunc('month', v_now at time zone 'UTC')::date;
  v_day := (v_now at time zone 'UTC')::date;

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

  -- The same job admitted again (a retried call): it already holds its units and slot.
  if exists (select 1 from charges where job_id = p_job and key_id = p_key) then
    return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
    return;
  end if;

  -- A test job counts against the UTC day's test allowance, a preview against the month's previews, a render against
  -- its renders (p_renders_limit is that kind's limit).
  if p_kind = 'test' then
    select used into v_used from test_days where key_id = p_key and day = v_day;
  else
    select case when p_kind = 'preview' then previews_used else renders_used end into v_used
      from usage_periods where key_id = p_key and period_start = v_period;
  end if;
  -- All of the job's units or none: a merged document of n parts needs n left.
  if coalesce(v_used, 0) + p_units > p_renders_limit then
    return query select 'quota_exceeded'::text, greatest(p_rate_limit - v_count, 0), v_reset,
      greatest(1, ceil(extract(epoch from (case when p_kind = 'test'
        then (v_day + 1)::timestamp at time zone 'UTC'
        else (v_period + interval '1 month')::timestamp at time zone 'UTC' end) - v_now))::int);
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
  -- A test charge's period_start is its UTC day (the row of test_days a refund gives the units back to).
  insert into charges (job_id, key_id, period_start, charged_at, units, kind)
    values (p_job, p_key, case when p_kind = 'test' then v_day else v_period end, v_now, p_units, p_kind);
  if p_kind = 'test' then
    insert into test_days as t (key_id, day, used) values (p_key, v_day, p_units)
      on conflict (key_id, day) do update set used = t.used + p_units;
  elsif p_kind = 'preview' then
    insert into usage_periods as u (key_id, period_start, renders_used, previews_used) values (p_key, v_period, 0, p_units)
      on conflict (key_id, period_start) do update set previews_used = u.previews_used + p_units;
  else
    insert into usage_periods as u (key_id, period_start, renders_used) values (p_key, v_period, p_units)
      on conflict (key_id, period_start) do update set renders_used = u.renders_used + p_units;
  end if;
  return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
end
$$`;

/** The function of 20261127T230000, restored by down(). */
const ADMIT_V4 = sql`
create function admit(
  p_key text, p_rate_limit int, p_renders_limit bigint, p_concurrency int, p_job text, p_lease_seconds int,
  p_counted boolean default false, p_units int default 1, p_kind text default 'render'
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

  -- The same job admitted again (a retried call): it already holds its units and slot.
  if exists (select 1 from charges where job_id = p_job and key_id = p_key) then
    return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
    return;
  end if;

  -- A preview counts against the month's previews, a render against its renders (p_renders_limit is that kind's limit).
  select case when p_kind = 'preview' then previews_used else renders_used end into v_used
    from usage_periods where key_id = p_key and period_start = v_period;
  -- All of the job's units or none: a merged document of n parts needs n left.
  if coalesce(v_used, 0) + p_units > p_renders_limit then
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
  insert into charges (job_id, key_id, period_start, charged_at, units, kind) values (p_job, p_key, v_period, v_now, p_units, p_kind);
  if p_kind = 'preview' then
    insert into usage_periods as u (key_id, period_start, renders_used, previews_used) values (p_key, v_period, 0, p_units)
      on conflict (key_id, period_start) do update set previews_used = u.previews_used + p_units;
  else
    insert into usage_periods as u (key_id, period_start, renders_used) values (p_key, v_period, p_units)
      on conflict (key_id, period_start) do update set renders_used = u.renders_used + p_units;
  end if;
  return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
end
$$`;
