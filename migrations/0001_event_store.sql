-- The event log: append-only, one row per event, global position from an identity column.
-- Readers order by (transaction_id, global_position) and read only below the oldest transaction
-- still in flight, so an event committed late by a slower writer is never skipped.
-- Stream names use the "C" collation: byte order, the same in every database, and prefix ranges
-- (`stream_name >= prefix`) that match exactly the names starting with the prefix.
CREATE TABLE events (
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id bigint NOT NULL,
  stream_name text COLLATE "C" NOT NULL,
  stream_revision bigint NOT NULL CHECK (stream_revision >= 0),
  tenant_id text NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  schema_version integer NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The log order is the key: one index serves readAll and uniqueness (one index less per append).
  CONSTRAINT events_log_order PRIMARY KEY (transaction_id, global_position),
  -- By the stream's short id, not its name: this index takes random inserts across all streams,
  -- and 16-byte keys keep it a third of the size (and in memory).
  CONSTRAINT events_stream_revision_unique UNIQUE (stream_id, stream_revision),
  CONSTRAINT events_event_id_unique UNIQUE (event_id)
);

-- Current revision of each stream: appends lock and advance this row, so two writers expecting
-- the same revision cannot both succeed.
CREATE TABLE streams (
  stream_name text COLLATE "C" PRIMARY KEY,
  stream_id bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id text NOT NULL,
  revision bigint NOT NULL CHECK (revision >= 0)
);

-- Appends one round of writes (each to a different stream) in one call: one round trip, and
-- plans that the session caches. A write claims its stream by checking its expected revision and
-- advancing the stream's row under a row lock, so that of two writers expecting the same
-- revision only one succeeds. If any write cannot claim its stream the function raises SQLSTATE
-- SE409, with DETAIL {"streamName", "actual"}, and nothing of the call stays. Events are inserted
-- in the given order; `events` is a JSON array of [stream_name, offset within its write,
-- tenant_id, event_id, event_type, schema_version, data, occurred_at].
CREATE FUNCTION events_append(
  stream_names text[],
  tenant_ids text[],
  expected_kinds text[],
  expected_revisions bigint[],
  event_counts bigint[],
  events jsonb,
  notify boolean
) RETURNS TABLE (appended_stream text, last_revision bigint, last_position bigint, appended_in xid8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  claimed_streams text[];
  claimed_ids bigint[];
  claimed_revisions bigint[];
  unclaimed text;
  actual bigint;
BEGIN
  WITH writes AS (
    SELECT * FROM unnest(stream_names, tenant_ids, expected_kinds, expected_revisions, event_counts)
      AS w (stream_name, tenant_id, expected_kind, expected_revision, event_count)
  ),
  created AS (
    INSERT INTO streams (stream_name, tenant_id, revision)
    SELECT w.stream_name, w.tenant_id, w.event_count - 1 FROM writes w WHERE w.expected_kind = 'no_stream'
    ON CONFLICT (stream_name) DO NOTHING
    RETURNING streams.stream_name, streams.stream_id, streams.revision
  ),
  upserted AS (
    INSERT INTO streams AS s (stream_name, tenant_id, revision)
    SELECT w.stream_name, w.tenant_id, w.event_count - 1 FROM writes w WHERE w.expected_kind = 'any'
    ON CONFLICT (stream_name) DO UPDATE SET revision = s.revision + excluded.revision + 1
    RETURNING s.stream_name, s.stream_id, s.revision
  ),
  advanced AS (
    UPDATE streams AS s SET revision = s.revision + w.event_count
    FROM writes w
    WHERE s.stream_name = w.stream_name
      AND (w.expected_kind = 'stream_exists' OR (w.expected_kind = 'exact' AND s.revision = w.expected_revision))
    RETURNING s.stream_name, s.stream_id, s.revision
  ),
  claimed AS (
    SELECT * FROM created UNION ALL SELECT * FROM upserted UNION ALL SELECT * FROM advanced
  )
  SELECT array_agg(c.stream_name), array_agg(c.stream_id), array_agg(c.revision)
  INTO claimed_streams, claimed_ids, claimed_revisions
  FROM claimed c;

  SELECT name INTO unclaimed FROM unnest(stream_names) AS name WHERE name <> ALL (coalesce(claimed_streams, '{}')) LIMIT 1;
  IF unclaimed IS NOT NULL THEN
    SELECT s.revision INTO actual FROM streams s WHERE s.stream_name = unclaimed;
    RAISE EXCEPTION 'wrong expected revision for stream %', unclaimed
      USING ERRCODE = 'SE409', DETAIL = json_build_object('streamName', unclaimed, 'actual', actual::text)::text;
  END IF;

  RETURN QUERY
  WITH claimed AS (
    SELECT * FROM unnest(claimed_streams, claimed_ids, claimed_revisions) AS c (stream_name, stream_id, last_revision)
  ),
  inserted AS (
    INSERT INTO events (stream_id, stream_name, stream_revision, tenant_id, event_id, event_type, schema_version, data, occurred_at)
    SELECT c.stream_id, c.stream_name,
      c.last_revision - w.event_count + 1 + (e.value ->> 1)::bigint,
      e.value ->> 2, (e.value ->> 3)::uuid, e.value ->> 4, (e.value ->> 5)::integer, e.value -> 6, (e.value ->> 7)::timestamptz
    FROM jsonb_array_elements(events) WITH ORDINALITY AS e (value, ordinal)
    JOIN claimed c ON c.stream_name = e.value ->> 0
    JOIN unnest(stream_names, event_counts) AS w (stream_name, event_count) ON w.stream_name = c.stream_name
    ORDER BY e.ordinal
    RETURNING events.stream_name, events.stream_revision, events.global_position, events.transaction_id
  )
  SELECT i.stream_name::text, max(i.stream_revision), max(i.global_position), max(i.transaction_id)
  FROM inserted i
  GROUP BY i.stream_name;

  IF notify THEN
    PERFORM pg_notify('supply_events', '');
  END IF;
END;
$$;

-- The log is append-only: no row is ever changed or removed (checked per statement, so that an
-- UPDATE, DELETE or TRUNCATE fails even when it would touch no row).
CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the event log is append-only';
END;
$$;

CREATE TRIGGER events_append_only
  BEFORE UPDATE OR DELETE OR TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();
