-- Which server a read lease is on, beyond its name: the standby's postmaster start time as the
-- router saw it. After a failover the new primary holds the old primary's leases (their rows were
-- committed synchronously); a lease whose standby is the new primary itself (same postmaster,
-- promoted) is satisfied there at once: its reads see the primary's own commits. NULL (a lease
-- recorded before this column) never matches: such a lease is waited for as before.
ALTER TABLE read_leases ADD COLUMN standby_started timestamptz;
