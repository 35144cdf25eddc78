import { sql, type Kysely } from "kysely";

/**
 * Template previews are admitted like renders (issue 39): each holds one of the key's
 * concurrency slots while it renders and counts against a monthly preview allowance of its own.
 *
 * - `usage_periods.previews_used`: the month's previews, beside its renders.
 * - `charges.kind`: what a charge counted ('render' or 'preview'), so a refund gives the unit
 *   back to the count it came from.
 * - `admit()` takes `p_kind` (default 'render'): a preview's quota is read from and added to
 *   previews_used, `p_renders_limit` being the preview allowance; slots, the rate window and the
 *   lock are the same as a render's, so a key's previews and renders share its concurrency.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("usage_periods")
    .addColumn("previews_used", "bigint", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`previews_used >= 0`),
    )
    .execute();
  await db.schema
    .alterTable("charges")
    .addColumn("kind", "text", (c) =>
      c
        .notNull()
        .defaultTo("render")
        .check(sql`kind in ('render', 'preview')`),
    )
    .execute();
  await sql`drop function if exists admit(text, int, bigint, int, text, int, boolean, int)`.execute(db);
  await ADMIT_V4.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists admit(text, int, bigint, int, text, int, boolean, int, text)`.execute(db);
  await ADMIT_V3.execute(db);
  await db.schema.alterTable("charges").dropColumn("kind").execute();
  await db.schema.alterTable("usage_periods").dropColumn("previews_used").execute();
}

/** admit() of 20261126T160000 with the kind of what is admitted (`p_kind`): a preview counts against previews_used. */
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

/** The function of 20261126T160000, restored by down(). */
const ADMIT_V3 = sql`
create function admit(
  p_key text, p_rate_limit int, p_renders_limit bigint, p_concurrency int, p_job text, p_lease_seconds int,
  p_counted boolean default false, p_units int default 1
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

  select renders_used into v_used from usage_periods where key_id = p_key and period_start = v_period;
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
  insert into charges (job_id, key_id, period_start, charged_at, units) values (p_job, p_key, v_period, v_now, p_units);
  insert into usage_periods as u (key_id, period_start, renders_used) values (p_key, v_period, p_units)
    on conflict (key_id, period_start) do update set renders_used = u.renders_used + p_units;
  return query select 'allowed'::text, greatest(p_rate_limit - v_count, 0), v_reset, 0;
end
$$`;
