-- Read leases (docs/operators.md, "High availability"): an API process reads from a hot standby
-- only while it holds a lease on it, recorded here on the primary before its first read there and
-- renewed while it reads. A change of who may read (a key revoked, a tenant suspended) commits,
-- then waits until every standby with a live lease has replayed it, or until the lease ends.
-- Not a read model: no tenant's data, one row per API process and standby.
CREATE TABLE read_leases (
  router_id text NOT NULL,
  standby_name text NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (router_id, standby_name)
);
