-- Export jobs: one row per accepted POST /v1/analytics/exports, kept 7 days after the request.
-- The queue (BullMQ or the in-process runner) carries only (tenant_id, export_id); this row is the
-- job's state, read by polls and updated by the worker.
CREATE TABLE export_jobs (
  tenant_id text COLLATE "C" NOT NULL,
  export_id text COLLATE "C" NOT NULL,
  report_type text NOT NULL CHECK (report_type = 'briefing'),
  period text NOT NULL CHECK (period IN ('daily', 'weekly')),
  -- The language of the request's Accept-Language: the CSV labels are written in it.
  language text NOT NULL CHECK (language IN ('en', 'es', 'pt')),
  status text NOT NULL CHECK (status IN ('pending', 'building', 'ready', 'failed')),
  -- Prefix of the key that asked for it (never the key).
  requested_by text NOT NULL,
  requested_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  -- Kept once set: a job that failed and was built again still says so.
  error text CHECK (error IN ('processing_error')),
  as_of timestamptz,
  byte_size bigint CHECK (byte_size >= 0),
  checksum text CHECK (checksum ~ '^[0-9a-f]{64}$'),
  storage_key text,
  file_name text,
  ready_at timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, export_id),
  CHECK ((status = 'ready') = (byte_size IS NOT NULL AND checksum IS NOT NULL AND storage_key IS NOT NULL AND ready_at IS NOT NULL)),
  CHECK (status <> 'failed' OR error IS NOT NULL)
);
CREATE INDEX ON export_jobs (tenant_id, requested_at);

-- The audit trail of exports: requests (the key prefix as actor), refusals to queue, and what the
-- worker did (sizes and checksums). Rows outlive the jobs they describe.
CREATE TABLE audit_trail (
  tenant_id text COLLATE "C" NOT NULL,
  entry_id bigint GENERATED ALWAYS AS IDENTITY,
  recorded_at timestamptz NOT NULL,
  -- A key prefix for requests; `worker` or `retention` for the service's own steps.
  actor text NOT NULL,
  action text NOT NULL,
  export_id text COLLATE "C",
  request_id text,
  details jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, entry_id)
);
CREATE INDEX ON audit_trail (tenant_id, export_id);
