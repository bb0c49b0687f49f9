-- Secrets every process of the service must share. When SIGNING_SECRET is not set, the first
-- process to start stores a generated one here (the HMAC key of cursors and local download links).
CREATE TABLE service_secrets (
  name text PRIMARY KEY,
  secret text NOT NULL CHECK (length(secret) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
