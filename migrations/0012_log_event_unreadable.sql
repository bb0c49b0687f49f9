-- Stops a rebuild's load of a projection straight from the log (BulkLoader.loadFromLog) at an event
-- of the projection it does not read as it is (another schema version, data that is not a JSON
-- object): the load's INSERT … SELECT calls it for such an event only, in the same scan of the log
-- as its rows. SQLSTATE 22000 (data_exception): the replay takes it as a refusal, rolls the load
-- back and runs again through Node, which names the event.
CREATE FUNCTION log_event_unreadable(event_position bigint, event_type text, schema_version integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'the log holds an event it does not read as it is: % v% at position %', event_type, schema_version, event_position
    USING ERRCODE = 'data_exception';
END
$$;
