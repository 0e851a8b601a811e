-- SPDX-License-Identifier: MPL-2.0
-- roles.sql - the two Postgres roles retrig runs with, for the database this runs in:
--   retrig_writer   the workers and `retrig migrate`: owns the tables the migrations create,
--                   reads and writes them; no superuser, no CREATEDB/CREATEROLE.
--   retrig_sheriff  read-only (tables and views); a NOLOGIN group role, as migration 0001
--                   creates it: grant it to the login role of each sheriff or dashboard:
--                     CREATE ROLE alice LOGIN IN ROLE retrig_sheriff;
--                     ALTER ROLE alice SET default_transaction_read_only = on;
-- Run it as a superuser (or the database owner) once per database, before the first
-- `retrig migrate`, then give the roles passwords out of band:
--   psql -d retrig -v ON_ERROR_STOP=1 -f deploy/postgres/roles.sql
--   psql -d retrig -c '\password retrig_writer'
-- Idempotent: re-running it changes nothing. Tables created later by retrig_writer (new
-- migrations) are readable by retrig_sheriff through default privileges.
\set ON_ERROR_STOP on
BEGIN;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'retrig_writer') THEN
        CREATE ROLE retrig_writer LOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'retrig_sheriff') THEN
        CREATE ROLE retrig_sheriff NOLOGIN;
    END IF;
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO retrig_writer', current_database());
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO retrig_sheriff', current_database());
END
$$;

ALTER ROLE retrig_writer NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
ALTER ROLE retrig_writer SET statement_timeout = '5min';
ALTER ROLE retrig_sheriff NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;

-- Only the writer creates objects (migrations); nobody else may.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO retrig_writer;
GRANT USAGE ON SCHEMA public TO retrig_sheriff;

-- pg_partman (Debian's postgresql-15-partman) keeps the test history's daily partitions
-- (migration 0019); creating an extension takes a superuser, so it is created here, and the
-- writer may read and update its configuration and run its maintenance.
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;
GRANT USAGE ON SCHEMA partman TO retrig_writer;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA partman TO retrig_writer;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA partman TO retrig_writer;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA partman TO retrig_writer;

-- Objects that exist already (created by another role before this ran).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO retrig_writer;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO retrig_writer;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO retrig_sheriff;

-- Objects the writer's migrations create from now on.
ALTER DEFAULT PRIVILEGES FOR ROLE retrig_writer IN SCHEMA public
    GRANT SELECT ON TABLES TO retrig_sheriff;
-- And those of the role running this file, should it run the migrations instead.
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO retrig_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO retrig_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO retrig_sheriff;

COMMIT;
