#!/bin/sh
# docker-compose.yml: lets the standby container stream from this primary (pg_basebackup, WAL).
set -e
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
