-- Evidence ids become content addresses of the figure (`ev2`): a record is stored once, when a
-- figure is first served, and keeps that first as_of. Retention follows the last time an id was
-- handed out, so that an id in use keeps verifying: last_served_at moves forward (at most once
-- a day per record) whenever a read serves the id again. `ev1` records, keyed by the request's
-- asOf, are kept as they are and keep verifying until retention removes them.
ALTER TABLE analytics_evidence ADD COLUMN last_served_at timestamptz;
UPDATE analytics_evidence SET last_served_at = greatest(created_at, as_of);
ALTER TABLE analytics_evidence ALTER COLUMN last_served_at SET NOT NULL;
CREATE INDEX analytics_evidence_last_served ON analytics_evidence (tenant_id, last_served_at);
DROP INDEX IF EXISTS analytics_evidence_tenant_id_created_at_idx;
