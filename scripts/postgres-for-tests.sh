#!/usr/bin/env bash
# PostgreSQL for `npm test` (issue 11: the integration suite runs on SQLite and on PostgreSQL).
# Installs Debian's package when missing, starts the first cluster (making one if there is
# none), and gives the postgres user the password the tests use (DROVER_TEST_PG_URL's default,
# postgresql://postgres:postgres@127.0.0.1:5432/postgres). Run as root, as .ci/run is.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "--- installing PostgreSQL from apt"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
read -r version cluster _ < <(pg_lsclusters -h | head -1) || true
if [ -z "${version:-}" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -1)
  cluster=main
  pg_createcluster "$version" "$cluster" >/dev/null
fi
pg_ctlcluster "$version" "$cluster" start 2>/dev/null || true
for _ in $(seq 1 30); do
  runuser -u postgres -- psql -qAtc "SELECT 1" >/dev/null 2>&1 && break
  sleep 1
done
runuser -u postgres -- psql -qAtc "ALTER USER postgres PASSWORD 'postgres'" >/dev/null
# A cluster for tests holds nothing worth a flush: every test database is made from a template
# and dropped (each CREATE and DROP DATABASE a checkpoint), and every commit waited for its fsync.
# Durability off, as CI databases commonly run; the server's behaviour is otherwise the same
# (the PostgreSQL half of the suite 204 → 178 s; issue 20).
for setting in "fsync = off" "synchronous_commit = off" "full_page_writes = off"; do
  runuser -u postgres -- psql -qAtc "ALTER SYSTEM SET $setting" >/dev/null
done
runuser -u postgres -- psql -qAtc "SELECT pg_reload_conf()" >/dev/null
echo "PostgreSQL $version/$cluster is up on port $(pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1==v && $2==c {print $3}')"
