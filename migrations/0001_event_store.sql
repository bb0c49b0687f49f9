-- The event log: append-only, one row per event, global position from an identity column.
-- Readers order by (transaction_id, global_position) and read only below the oldest transaction
-- still in flight, so an event committed late by a slower writer is never skipped.
CREATE TABLE events (
  global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_name text NOT NULL,
  stream_revision bigint NOT NULL,
  tenant_id text NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  schema_version integer NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT events_stream_revision_unique UNIQUE (stream_name, stream_revision),
  CONSTRAINT events_event_id_unique UNIQUE (event_id)
);

CREATE INDEX events_log_order ON events (transaction_id, global_position);

-- Current revision of each stream, for expected-revision checks on append.
CREATE TABLE streams (
  stream_name text PRIMARY KEY,
  tenant_id text NOT NULL,
  revision bigint NOT NULL
);

-- The log is append-only: no row is ever changed or removed.
CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the event log is append-only';
END;
$$;

CREATE TRIGGER events_append_only
  BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_are_append_only();
