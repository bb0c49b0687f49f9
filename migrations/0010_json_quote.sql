-- The JSON string literal of a text, exactly as JavaScript's JSON.stringify writes it (the same
-- escapes: `"`, `\`, and \b \f \n \r \t or \u00xx for the other control characters; nothing else).
-- to_json is STABLE only because it serves every type; for text its answer depends on nothing but
-- the text, so this wrapper is IMMUTABLE and a generated column may use it: read models keep the
-- JSON of a /v1 item beside its columns (boxes.balance_json), and the API sends it as it is.
CREATE FUNCTION json_quote(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN to_json(value)::text;
