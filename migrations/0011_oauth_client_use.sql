-- When each OAuth client of the assistant endpoint was last used (a sign-in, or a refresh), so
-- that the hourly purge can delete registrations never used, or not used for a long time.
ALTER TABLE oauth_clients ADD COLUMN last_used_at timestamptz;

UPDATE oauth_clients AS c SET last_used_at = used.at
FROM (SELECT client_id, max(created_at) AS at FROM oauth_grants GROUP BY client_id) AS used
WHERE used.client_id = c.client_id;

-- The purge looks for clients that no grant refers to any more.
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
