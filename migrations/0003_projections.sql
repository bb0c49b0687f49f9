-- Projection bookkeeping. A projection's tables live in a schema of their own per generation
-- (rm_<projection>_g<generation>); readers use the views of schema read_models, which point at the
-- active generation. A replay builds the next generation beside the live one and switches the
-- views in one transaction.
CREATE SCHEMA read_models;

-- One row per generation. The checkpoint is the log position of the last event the generation has
-- seen (applied or not handled); it moves only by compare-and-set inside the batch transaction that
-- applies the rows it covers. events_seen counts every log event up to the checkpoint (lag in
-- events = visible events - events_seen).
CREATE TABLE projection_generations (
  projection text NOT NULL,
  generation integer NOT NULL CHECK (generation > 0),
  definition_version integer NOT NULL,
  schema_name text NOT NULL UNIQUE,
  state text NOT NULL CHECK (state IN ('building', 'active', 'retired', 'failed')),
  checkpoint_tx bigint NOT NULL DEFAULT 0,
  checkpoint_seq bigint NOT NULL DEFAULT 0,
  events_seen bigint NOT NULL DEFAULT 0,
  events_applied bigint NOT NULL DEFAULT 0,
  checkpoint_recorded_at timestamptz,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (projection, generation)
);

CREATE UNIQUE INDEX projection_generations_one_active ON projection_generations (projection) WHERE state = 'active';

-- Events a projection could not apply in live mode: recorded, skipped, counted, shown. Never
-- dropped silently.
CREATE TABLE projection_dead_letters (
  projection text NOT NULL,
  generation integer NOT NULL,
  position_tx bigint NOT NULL,
  position_seq bigint NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  tenant_id text NOT NULL,
  stream_name text NOT NULL,
  error text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (projection, generation, position_tx, position_seq)
);
