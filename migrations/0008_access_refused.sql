-- Raised from inside a read statement whose caller may no longer read (its key revoked, its member
-- or tenant no longer active): the check and the read are one statement, and that statement returns
-- no rows at all when the check fails. SQLSTATE SA401 is the service's own, so that no error of
-- Postgres itself is taken for it; the API answers it with 401. STABLE, not VOLATILE, so that a
-- check built on it is a one-time filter that Postgres evaluates before it reads any row.
CREATE FUNCTION access_refused() RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
BEGIN
  RAISE EXCEPTION 'access refused' USING ERRCODE = 'SA401';
END;
$$;
