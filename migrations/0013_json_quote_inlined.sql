-- json_quote (0010) without to_json: the same JSON string literal (JavaScript's JSON.stringify:
-- `"` and `\` escaped, \b \f \n \r \t, the other control characters as \u00xx in lowercase hex,
-- nothing else), from immutable functions only. The wrapper of to_json (STABLE) could not be inlined
-- into the expressions that call it (an IMMUTABLE function whose body is not is called as a
-- function: ~0.9 us a call, three for every box a projection writes, through its balance_json);
-- this body is (not STRICT: a NULL gives NULL either way). A text with nothing to escape, nearly
-- every id, is only quoted; the replacements run for the others. Postgres text holds no NUL.
CREATE OR REPLACE FUNCTION json_quote(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN value !~ '[\x01-\x1f"\\]' THEN '"' || value || '"'
  ELSE '"' || replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(value, '\', '\\'), '"', '\"'), chr(1), '\u0001'), chr(2), '\u0002'), chr(3), '\u0003'), chr(4), '\u0004'), chr(5), '\u0005'), chr(6), '\u0006'), chr(7), '\u0007'), chr(8), '\b'), chr(9), '\t'), chr(10), '\n'), chr(11), '\u000b'), chr(12), '\f'), chr(13), '\r'), chr(14), '\u000e'), chr(15), '\u000f'), chr(16), '\u0010'), chr(17), '\u0011'), chr(18), '\u0012'), chr(19), '\u0013'), chr(20), '\u0014'), chr(21), '\u0015'), chr(22), '\u0016'), chr(23), '\u0017'), chr(24), '\u0018'), chr(25), '\u0019'), chr(26), '\u001a'), chr(27), '\u001b'), chr(28), '\u001c'), chr(29), '\u001d'), chr(30), '\u001e'), chr(31), '\u001f') || '"'
END;
