-- OAuth sign-in of the assistant endpoint (/mcp). Secrets, sign-in codes, authorization codes and
-- tokens are stored only as SHA-256 hashes (hex); every row expires.

-- Clients registered dynamically (RFC 7591). They belong to no tenant: a client registers before
-- anyone signs in, and one client (an assistant app) may be used by members of many tenants.
CREATE TABLE oauth_clients (
  client_id text COLLATE "C" NOT NULL PRIMARY KEY,
  -- NULL for public clients (token_endpoint_auth_method "none").
  client_secret_hash text CHECK (client_secret_hash ~ '^[0-9a-f]{64}$'),
  client_secret_expires_at timestamptz,
  redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) > 0),
  -- The registered metadata as sent (client_name, grant_types, …), without any secret.
  metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL
);

-- One-time codes the console hands a member so that they can sign in on the /authorize page.
CREATE TABLE oauth_sign_in_codes (
  tenant_id text COLLATE "C" NOT NULL,
  code_hash text COLLATE "C" NOT NULL CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  member_id text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (tenant_id, code_hash)
);
-- Looked up by hash (the tenant is not known until the code is).
CREATE UNIQUE INDEX oauth_sign_in_codes_hash ON oauth_sign_in_codes (code_hash);

-- A grant: one sign-in of one member for one client. Its tokens (the first pair and every
-- refreshed one) share its request budget; revoking it ends all of them.
CREATE TABLE oauth_grants (
  tenant_id text COLLATE "C" NOT NULL,
  grant_id text COLLATE "C" NOT NULL,
  member_id text COLLATE "C" NOT NULL,
  client_id text COLLATE "C" NOT NULL REFERENCES oauth_clients (client_id),
  scopes text[] NOT NULL,
  resource text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, grant_id)
);
CREATE UNIQUE INDEX oauth_grants_id ON oauth_grants (grant_id);

-- Authorization codes: single use, bound to the client, the redirect URI and the PKCE challenge.
CREATE TABLE oauth_authorization_codes (
  tenant_id text COLLATE "C" NOT NULL,
  code_hash text COLLATE "C" NOT NULL CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  grant_id text COLLATE "C" NOT NULL,
  client_id text COLLATE "C" NOT NULL,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (tenant_id, code_hash),
  FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, grant_id)
);
CREATE UNIQUE INDEX oauth_authorization_codes_hash ON oauth_authorization_codes (code_hash);

-- Access and refresh tokens. A refresh token is used once: using it marks it used_at and issues
-- a new pair; presenting a used one again revokes the whole grant (it was stolen or replayed).
CREATE TABLE oauth_tokens (
  tenant_id text COLLATE "C" NOT NULL,
  token_hash text COLLATE "C" NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  grant_id text COLLATE "C" NOT NULL,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz CHECK (used_at IS NULL OR kind = 'refresh'),
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, grant_id)
);
CREATE UNIQUE INDEX oauth_tokens_hash ON oauth_tokens (token_hash);
CREATE INDEX ON oauth_tokens (tenant_id, grant_id);
