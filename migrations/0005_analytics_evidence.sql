-- Evidence of analytics figures: what was computed (subject and parameters), for whom, with which
-- definition version, at which asOf and projection checkpoint, and the figure as served. The id
-- is derived from everything but the figure, so the same request at the same checkpoint and asOf
-- names the same record. `supply-api evidence verify` recomputes `recorded` from the event log.
CREATE TABLE analytics_evidence (
  tenant_id text COLLATE "C" NOT NULL,
  evidence_id text COLLATE "C" NOT NULL,
  subject jsonb NOT NULL,
  definition_version integer NOT NULL,
  as_of timestamptz NOT NULL,
  checkpoint_tx bigint NOT NULL,
  checkpoint_seq bigint NOT NULL,
  -- The figure as served, as JSON text: stored as it was sent (no reparse into jsonb, the largest
  -- part of storing a long exceptions list); verification compares it canonically.
  recorded text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, evidence_id)
);
CREATE INDEX ON analytics_evidence (tenant_id, created_at);
