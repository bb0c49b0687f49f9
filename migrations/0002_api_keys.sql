-- API keys: only the SHA-256 of the key and its 12-character prefix are stored.
-- A revoked key keeps its row for audit.
CREATE TABLE api_keys (
  tenant_id text NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL,
  name text NOT NULL,
  member_id text NOT NULL,
  scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
  environment text NOT NULL DEFAULT 'test' CHECK (environment = 'test'),
  status text NOT NULL CHECK (status IN ('active', 'revoked')),
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, prefix),
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);

CREATE UNIQUE INDEX api_keys_prefix_unique ON api_keys (prefix);
CREATE UNIQUE INDEX api_keys_hash_unique ON api_keys (key_hash);
