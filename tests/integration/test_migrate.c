/* SPDX-License-Identifier: MPL-2.0 */
/* test_migrate.c - common/migrate and migrations/ against the shared local Postgres. Each test
 * creates its own database (and drops it afterwards), so tests may run in parallel. */
#include "support/util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/io/migrate.h"
#include "common/io/pg.h"

typedef struct test_db {
    rt_config cfg;
    rt_pg *admin; /* connected to the shared database, to create and drop ours */
    char name[96];
    rt_pg *pg;           /* connected to ours */
    char *tmp;           /* a scratch migrations directory, or NULL */
    char *tmp_functions; /* a scratch SQL functions directory, or NULL */
} test_db;

static void exec_ok(rt_pg *pg, const char *sql)
{
    int rc = rt_pg_exec(pg, sql, 0, NULL, NULL);
    if (rc != RT_OK) fail_msg("%s: %s", sql, rt_pg_errstr(pg));
}

/* CREATE/DROP DATABASE take no parameters: the name is quoted with PQescapeIdentifier. */
static void admin_exec_on_db(test_db *t, const char *command, const char *suffix)
{
    char *ident = PQescapeIdentifier(rt_pg_conn(t->admin), t->name, strlen(t->name));
    char sql[256];
    assert_non_null(ident);
    snprintf(sql, sizeof sql, "%s %s%s", command, ident, suffix);
    PQfreemem(ident);
    exec_ok(t->admin, sql);
}

static int setup_db(void **state)
{
    test_db *t = calloc(1, sizeof *t);
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_non_null(t);
    assert_int_equal(rt_config_load(&t->cfg, NULL, errstr), RT_OK);
    if (rt_pg_connect(&t->admin, t->cfg.database_url, "test", errstr) != RT_OK)
        fail_msg("%s", errstr);
    rt_test_unique_name(t->name, sizeof t->name, "rt_test_migrate");
    admin_exec_on_db(t, "CREATE DATABASE", "");
    if (rt_pg_connect_dbname(&t->pg, t->cfg.database_url, t->name, "test", errstr) != RT_OK)
        fail_msg("%s", errstr);
    *state = t;
    return 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int teardown_db(void **state)
{
    test_db *t = *state;
    rt_pg_free(t->pg);
    admin_exec_on_db(t, "DROP DATABASE IF EXISTS", " WITH (FORCE)");
    rt_pg_free(t->admin);
    rt_config_free(&t->cfg);
    if (t->tmp) remove_tree(t->tmp);
    free(t->tmp);
    if (t->tmp_functions) remove_tree(t->tmp_functions);
    free(t->tmp_functions);
    free(t);
    return 0;
}

static const char *migrations_dir(void) { return rt_test_source("migrations"); }
/* Its own buffer: rt_test_source's is shared with migrations_dir(). */
static const char *functions_dir(void) { return RT_TEST_SOURCE_DIR "/sql/functions"; }

/* Copies every *.sql file of src into a new scratch directory, *tmp. */
static const char *copy_sql_files(const char *src_path, char **tmp)
{
    char src_dir[4096], src[8192], dst[8192];
    DIR *d;
    struct dirent *e;
    snprintf(src_dir, sizeof src_dir, "%s", src_path);
    *tmp = rt_test_tempdir();
    d = opendir(src_dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".sql") != 0) continue;
        snprintf(src, sizeof src, "%s/%s", src_dir, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", *tmp, e->d_name);
        char *text = rt_test_read_file(src, NULL);
        rt_test_write_file(dst, text);
        free(text);
    }
    closedir(d);
    return *tmp;
}

/* Copies every *.sql file of migrations/ into a new scratch directory. */
static const char *copy_migrations(test_db *t) { return copy_sql_files(migrations_dir(), &t->tmp); }

/* Copies every *.sql file of sql/functions/ into a new scratch directory. */
static const char *copy_functions(test_db *t)
{
    return copy_sql_files(functions_dir(), &t->tmp_functions);
}

static void write_in(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rt_test_write_file(path, text);
}

/* The single text value of a one-row, one-column query. */
static char *query_value(rt_pg *pg, const char *sql)
{
    PGresult *res = NULL;
    if (rt_pg_exec(pg, sql, 0, NULL, &res) != RT_OK) fail_msg("%s: %s", sql, rt_pg_errstr(pg));
    assert_int_equal(PQntuples(res), 1);
    char *value = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    return value;
}

static void assert_query(rt_pg *pg, const char *sql, const char *expected)
{
    char *value = query_value(pg, sql);
    if (strcmp(value, expected) != 0) fail_msg("%s gave %s, expected %s", sql, value, expected);
    free(value);
}

/* Counts the migrations applied (not the function files). */
static void count_applied(const rt_migration *m, void *arg)
{
    if (!m->is_function) (*(size_t *)arg)++;
}

static void migrate_ok(test_db *t, const char *dir, size_t *applied_now)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc =
        rt_migrate_apply(t->pg, dir, functions_dir(), NULL, NULL, applied_now, NULL, NULL, errstr);
    if (rc != RT_OK) fail_msg("migrate: %s: %s", rt_strerror(rc), errstr);
}

static void test_migrate_applies_all_then_second_run_is_noop(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t applied = 0, already = 0, callbacks = 0;

    assert_int_equal(rt_migrate_apply(t->pg, migrations_dir(), functions_dir(), count_applied,
                                      &callbacks, &applied, &already, NULL, errstr),
                     RT_OK);
    assert_true(applied >= 1);
    assert_int_equal(callbacks, applied);
    assert_int_equal(already, 0);
    assert_query(t->pg,
                 "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
                 " AND table_name IN ('runs', 'retrigger_sets', 'retrigger_set_members',"
                 " 'decisions', 'budget_ledger', 'schema_migrations')",
                 "6");
    assert_query(t->pg, "SELECT name FROM schema_migrations WHERE version = 1", "0001_initial.sql");

    size_t first_run = applied;
    callbacks = 0;
    assert_int_equal(rt_migrate_apply(t->pg, migrations_dir(), functions_dir(), count_applied,
                                      &callbacks, &applied, &already, NULL, errstr),
                     RT_OK);
    assert_int_equal(applied, 0);
    assert_int_equal(callbacks, 0);
    assert_int_equal(already, first_run);

    rt_migration_list list;
    assert_int_equal(rt_migrate_status(t->pg, migrations_dir(), functions_dir(), &list, errstr),
                     RT_OK);
    assert_int_equal(list.applied, first_run);
    assert_int_equal(list.pending, 0);
    assert_string_equal(list.items[0].sha256, list.items[0].recorded_sha256);
    rt_migration_list_free(&list);
}

static void test_status_of_new_database_lists_everything_pending(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_migration_list list;
    assert_int_equal(rt_migrate_status(t->pg, migrations_dir(), functions_dir(), &list, errstr),
                     RT_OK);
    assert_true(list.count >= 1);
    assert_int_equal(list.pending, list.count);
    assert_int_equal(list.applied, 0);
    assert_int_equal(strlen(list.items[0].sha256), 64);
    assert_true(list.function_count >= 1);
    assert_int_equal(list.functions_pending, list.function_count);
    assert_true(list.functions[0].is_function);
    rt_migration_list_free(&list);
    /* status changes nothing: not even schema_migrations is created */
    assert_query(t->pg, "SELECT to_regclass('schema_migrations') IS NULL", "t");
    assert_query(t->pg, "SELECT to_regclass('schema_functions') IS NULL", "t");
}

static void test_changed_applied_migration_is_refused(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    char path[4096];
    size_t applied = 99;
    const char *dir = copy_migrations(t);
    migrate_ok(t, dir, NULL);
    char *before = query_value(t->pg, "SELECT count(*) FROM schema_migrations");

    snprintf(path, sizeof path, "%s/0001_initial.sql", dir);
    char *text = rt_test_read_file(path, NULL);
    char *edited = NULL;
    assert_true(asprintf(&edited, "%s\n-- an innocent-looking edit\n", text) > 0);
    rt_test_write_file(path, edited);
    write_in(dir, "9999_later.sql", "CREATE TABLE later_table (id integer);\n");

    assert_int_equal(
        rt_migrate_apply(t->pg, dir, functions_dir(), NULL, NULL, &applied, NULL, NULL, errstr),
        RT_ECONFLICT);
    assert_int_equal(applied, 0);
    assert_non_null(strstr(errstr, "0001_initial.sql"));
    assert_non_null(strstr(errstr, "sha256"));
    assert_query(t->pg, "SELECT to_regclass('later_table') IS NULL", "t");
    assert_query(t->pg, "SELECT count(*) FROM schema_migrations", before);

    free(before);
    free(text);
    free(edited);
}

static void test_applied_migration_missing_from_disk_is_refused(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    char path[4096];
    const char *dir = copy_migrations(t);
    write_in(dir, "9998_extra.sql", "CREATE TABLE extra_table (id integer);\n");
    migrate_ok(t, dir, NULL);
    snprintf(path, sizeof path, "%s/9998_extra.sql", dir);
    assert_int_equal(unlink(path), 0);

    assert_int_equal(
        rt_migrate_apply(t->pg, dir, functions_dir(), NULL, NULL, NULL, NULL, NULL, errstr),
        RT_ENOTFOUND);
    assert_non_null(strstr(errstr, "9998_extra.sql"));
}

static void test_bad_file_name_is_refused_before_anything_is_applied(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    const char *dir = copy_migrations(t);
    write_in(dir, "12_too_short.sql", "CREATE TABLE never (id integer);\n");
    write_in(dir, "README.md", "not a migration, ignored\n");

    assert_int_equal(
        rt_migrate_apply(t->pg, dir, functions_dir(), NULL, NULL, NULL, NULL, NULL, errstr),
        RT_EINVAL);
    assert_non_null(strstr(errstr, "12_too_short.sql"));
    assert_query(t->pg, "SELECT count(*) FROM schema_migrations", "0");
}

static void test_failing_migration_is_rolled_back_and_earlier_ones_stay(void **state)
{
    test_db *t = *state;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t applied = 0;
    const char *dir = copy_migrations(t);
    write_in(dir, "9990_good.sql", "CREATE TABLE good_table (id integer);\n");
    write_in(dir, "9991_broken.sql",
             "CREATE TABLE half_done (id integer);\nINSERT INTO no_such_table VALUES (1);\n");
    char *before = NULL;

    assert_int_equal(
        rt_migrate_apply(t->pg, dir, functions_dir(), NULL, NULL, &applied, NULL, NULL, errstr),
        RT_EDB);
    assert_non_null(strstr(errstr, "9991_broken.sql"));
    assert_non_null(strstr(errstr, "no_such_table"));
    assert_true(applied >= 2); /* the real ones and 9990_good.sql */
    assert_query(t->pg, "SELECT to_regclass('good_table') IS NOT NULL", "t");
    assert_query(t->pg, "SELECT to_regclass('half_done') IS NULL", "t");
    assert_query(t->pg, "SELECT count(*) FROM schema_migrations WHERE version = 9991", "0");
    assert_false(rt_pg_in_transaction(t->pg));
    /* the handle is usable afterwards */
    before = query_value(t->pg, "SELECT 1");
    assert_string_equal(before, "1");
    free(before);
}

static void test_sheriff_role_cannot_write(void **state)
{
    test_db *t = *state;
    migrate_ok(t, migrations_dir(), NULL);

    exec_ok(t->pg, "SET ROLE retrig_sheriff");
    assert_query(t->pg, "SELECT count(*) FROM decisions", "0");
    assert_query(t->pg, "SELECT count(*) FROM decision_overview", "0");
    const char *params[] = {"1", "intermittent", "retriggers passed"};
    int rc = rt_pg_exec(t->pg,
                        "INSERT INTO decisions (set_id, verdict, reason, failure_seen_at)"
                        " VALUES ($1, $2, $3, now())",
                        3, params, NULL);
    assert_int_equal(rc, RT_EDB);
    assert_string_equal(rt_pg_sqlstate(t->pg), RT_PG_INSUFFICIENT_PRIVILEGE);
    assert_int_equal(rt_pg_exec(t->pg, "DELETE FROM runs", 0, NULL, NULL), RT_EDB);
    assert_string_equal(rt_pg_sqlstate(t->pg), RT_PG_INSUFFICIENT_PRIVILEGE);
    exec_ok(t->pg, "RESET ROLE");
}

static int insert_set(rt_pg *pg, const char *label, const char *task_id)
{
    const char *params[] = {
        "autoland", "f4f57f2ef06ab1b7bf1f6e61c13e2a6f4d14b4a9", label, "linux1804-64", task_id, "0",
        "3"};
    return rt_pg_exec(pg,
                      "INSERT INTO retrigger_sets (project, revision, label, platform,"
                      " original_task_id, original_run_id, retrigger_count)"
                      " VALUES ($1, $2, $3, $4, $5, $6, $7)",
                      7, params, NULL);
}

static void test_retrigger_set_unique_per_project_revision_label(void **state)
{
    test_db *t = *state;
    migrate_ok(t, migrations_dir(), NULL);
    const char *label = "test-linux1804-64/opt-mochitest-browser-chrome-e10s-1";

    assert_int_equal(insert_set(t->pg, label, "GWxTc8p_RUa5_Xo4RtMiCA"), RT_OK);
    /* a redelivered message, or another failed run of the same label on the same push */
    assert_int_equal(insert_set(t->pg, label, "B3EheQ-IQ5aPzw34KS_a6g"), RT_ECONFLICT);
    assert_string_equal(rt_pg_sqlstate(t->pg), RT_PG_UNIQUE_VIOLATION);
    assert_non_null(strstr(rt_pg_errstr(t->pg), "retrigger_sets_project_revision_label_key"));
    /* another label on the same push is its own set */
    assert_int_equal(
        insert_set(t->pg, "test-linux1804-64/opt-xpcshell-1", "B3EheQ-IQ5aPzw34KS_a6g"), RT_OK);
    assert_query(t->pg, "SELECT count(*) FROM retrigger_sets", "2");
}

/* Expects the statement to fail with the SQL state given. */
static void exec_fails(rt_pg *pg, const char *sql, const char *sqlstate)
{
    if (rt_pg_exec(pg, sql, 0, NULL, NULL) == RT_OK) fail_msg("%s: succeeded", sql);
    if (strcmp(rt_pg_sqlstate(pg), sqlstate) != 0)
        fail_msg("%s: SQL state %s, expected %s (%s)", sql, rt_pg_sqlstate(pg), sqlstate,
                 rt_pg_errstr(pg));
}

static void test_culprit_search_state_is_kept_on_a_regression_decision(void **state)
{
    test_db *t = *state;
    migrate_ok(t, migrations_dir(), NULL);
    /* Every column 0015 and 0025 add is described. */
    assert_query(t->pg,
                 "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
                 " WHERE c.relname IN ('decisions', 'culprit_pending_probes') AND a.attnum > 0"
                 " AND NOT a.attisdropped AND (c.relname = 'culprit_pending_probes'"
                 " OR a.attname LIKE 'culprit\\_%') AND col_description(c.oid, a.attnum) IS NULL",
                 "0");
    assert_query(t->pg,
                 "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
                 " WHERE c.relname = 'decisions' AND a.attname LIKE 'culprit\\_%'",
                 "14");
    assert_int_equal(
        insert_set(t->pg, "test-linux1804-64/opt-xpcshell-1", "GWxTc8p_RUa5_Xo4RtMiCA"), RT_OK);
    assert_int_equal(
        insert_set(t->pg, "test-linux1804-64/opt-xpcshell-2", "B3EheQ-IQ5aPzw34KS_a6g"), RT_OK);
    exec_ok(t->pg, "INSERT INTO decisions (set_id, verdict, reason, failure_seen_at)"
                   " SELECT id, CASE WHEN label LIKE '%-1' THEN 'regression' ELSE 'intermittent'"
                   " END, 'test', now() FROM retrigger_sets");
    const char *regression = "(SELECT id FROM retrigger_sets WHERE label LIKE '%-1')";
    char sql[1024];
    /* A search starts with an empty list of probes and nothing spent. */
    snprintf(sql, sizeof sql,
             "UPDATE decisions SET culprit_status = 'searching', culprit_reason = 'bisect',"
             " culprit_range_first = 'f4f57f2ef06a', culprit_range_last = 'b437ae030825',"
             " culprit_started_at = now(), culprit_updated_at = now() WHERE set_id = %s",
             regression);
    exec_ok(t->pg, sql);
    snprintf(sql, sizeof sql,
             "SELECT culprit_probes::text || ' ' || culprit_jobs_spent FROM decisions"
             " WHERE set_id = %s",
             regression);
    assert_query(t->pg, sql, "[] 0");
    /* found needs the culprit's revision, and only found has one. */
    snprintf(sql, sizeof sql, "UPDATE decisions SET culprit_status = 'found' WHERE set_id = %s",
             regression);
    exec_fails(t->pg, sql, RT_PG_CHECK_VIOLATION);
    snprintf(sql, sizeof sql,
             "UPDATE decisions SET culprit_revision = 'b437ae030825' WHERE set_id = %s",
             regression);
    exec_fails(t->pg, sql, RT_PG_CHECK_VIOLATION);
    snprintf(sql, sizeof sql,
             "UPDATE decisions SET culprit_status = 'found', culprit_revision = 'B437AE030825'"
             " WHERE set_id = %s",
             regression);
    exec_fails(t->pg, sql, RT_PG_CHECK_VIOLATION);
    snprintf(sql, sizeof sql,
             "UPDATE decisions SET culprit_status = 'found', culprit_revision = 'b437ae030825',"
             " culprit_pushlog_id = 231456, culprit_author = 'dev@example.com',"
             " culprit_jobs_spent = 19, culprit_probes = '[{\"round\": 1, \"revision\":"
             " \"b437ae030825\", \"times\": 5, \"runs\": 5, \"reproduced\": 4, \"class\": \"bad\","
             " \"confirm\": false}]' WHERE set_id = %s",
             regression);
    exec_ok(t->pg, sql);
    snprintf(sql, sizeof sql, "UPDATE decisions SET culprit_probes = '{}' WHERE set_id = %s",
             regression);
    exec_fails(t->pg, sql, RT_PG_CHECK_VIOLATION);
    exec_fails(t->pg, "UPDATE decisions SET culprit_status = 'lost'", RT_PG_CHECK_VIOLATION);
    /* Only a regression gets a search. */
    exec_fails(t->pg,
               "UPDATE decisions SET culprit_status = 'searching' WHERE verdict = 'intermittent'",
               RT_PG_CHECK_VIOLATION);

    /* Probes: one row per (set, push); a second insert for the same push does nothing. */
    snprintf(sql, sizeof sql,
             "INSERT INTO culprit_pending_probes (set_id, revision, label, round, times)"
             " VALUES (%s, 'a00000000004', 'test-linux1804-64/opt-xpcshell-1', 1, 5)",
             regression);
    exec_ok(t->pg, sql);
    exec_fails(t->pg, sql, RT_PG_UNIQUE_VIOLATION);
    char upsert[1200];
    snprintf(upsert, sizeof upsert,
             "WITH i AS (%s ON CONFLICT ON CONSTRAINT culprit_pending_probes_set_revision_key"
             " DO NOTHING RETURNING 1) SELECT count(*) FROM i",
             sql);
    assert_query(t->pg, upsert, "0");
    assert_query(t->pg, "SELECT state || ' ' || attempt FROM culprit_pending_probes", "intent 1");
    exec_fails(t->pg, "UPDATE culprit_pending_probes SET times = 101", RT_PG_CHECK_VIOLATION);
    exec_fails(t->pg, "UPDATE culprit_pending_probes SET revision = 'a0000000004'",
               RT_PG_CHECK_VIOLATION);
    /* More runs on the same push: a compare-and-set on the attempt, done once. */
    exec_ok(t->pg, "UPDATE culprit_pending_probes SET state = 'done', done_at = now()");
    const char *more = "WITH u AS (UPDATE culprit_pending_probes SET attempt = attempt + 1,"
                       " round = 2, times = 5, state = 'intent', action_task_id = NULL,"
                       " intent_at = now() WHERE revision = 'a00000000004' AND attempt = 1"
                       " AND state IN ('done', 'dry-run') RETURNING 1) SELECT count(*) FROM u";
    assert_query(t->pg, more, "1");
    assert_query(t->pg, more, "0");
    assert_query(t->pg, "SELECT state || ' ' || attempt FROM culprit_pending_probes", "intent 2");
    /* Sheriffs read it; deleting the decision removes its probes. */
    exec_ok(t->pg, "SET ROLE retrig_sheriff");
    assert_query(t->pg, "SELECT count(*) FROM culprit_pending_probes", "1");
    exec_ok(t->pg, "RESET ROLE");
    exec_ok(t->pg, "DELETE FROM decisions");
    assert_query(t->pg, "SELECT count(*) FROM culprit_pending_probes", "0");
}

typedef struct migrator {
    const char *url;
    const char *dbname;
    const char *dir;
    const char *functions_dir;
    size_t applied;
    int rc;
    char errstr[RT_ERRSTR_SIZE];
} migrator;

static void ledger_row(rt_pg *pg, const char *key, const char *platform, const char *day,
                       int amount)
{
    char amount_text[16];
    snprintf(amount_text, sizeof amount_text, "%d", amount);
    const char *params[] = {platform, day, amount_text, key};
    assert_int_equal(rt_pg_exec(pg,
                                "INSERT INTO budget_ledger (platform, day, amount, idempotency_key,"
                                " reason) VALUES ($1, $2::date, $3::integer, $4, 'test')",
                                4, params, NULL),
                     RT_OK);
}

static void test_budget_daily_is_the_ledger_total_per_platform_and_day(void **state)
{
    test_db *t = *state;
    /* Rows written before 0011 are counted by the migration itself. */
    char *dir = strdup(copy_migrations(t));
    /* 0011 and every migration after it are set aside, then put back. */
    char *later_names[64], *later[64];
    size_t nlater = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nlater < 64)
        if (strstr(e->d_name, ".sql") && strcmp(e->d_name, "0011") >= 0)
            later_names[nlater++] = strdup(e->d_name);
    closedir(d);
    assert_true(nlater >= 1);
    for (size_t i = 0; i < nlater; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, later_names[i]);
        later[i] = rt_test_read_file(path, NULL);
        assert_int_equal(unlink(path), 0);
    }
    /* The function files go with the whole tree (budget_daily_follow's trigger writes 0011's
     * budget_daily): none until then. */
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_migrate_apply(t->pg, dir, NULL, NULL, NULL, NULL, NULL, NULL, errstr) != RT_OK)
        fail_msg("migrate up to 0010: %s", errstr);
    ledger_row(t->pg, "a", "linux64", "2026-11-30", 5);
    ledger_row(t->pg, "b", "linux64", "2026-11-30", 3);
    for (size_t i = 0; i < nlater; i++) {
        write_in(dir, later_names[i], later[i]);
        free(later[i]);
        free(later_names[i]);
    }
    migrate_ok(t, dir, NULL);
    free(dir);
    static const char total[] = "SELECT coalesce(string_agg(platform || ' ' || day || ' ' || spent,"
                                " ', ' ORDER BY platform, day), '') FROM budget_daily";
    assert_query(t->pg, total, "linux64 2026-11-30 8");

    /* Then the trigger follows every change: refunds (negative rows), other platforms and
     * days, updates, deletes and TRUNCATE. */
    ledger_row(t->pg, "c", "linux64", "2026-11-30", -2);
    ledger_row(t->pg, "d", "android-hw", "2026-11-30", 4);
    ledger_row(t->pg, "e", "linux64", "2026-12-01", 5);
    assert_query(t->pg, total,
                 "android-hw 2026-11-30 4, linux64 2026-11-30 6, linux64 2026-12-01 5");
    exec_ok(t->pg,
            "UPDATE budget_ledger SET amount = 1, day = '2026-12-01' WHERE idempotency_key = 'a'");
    exec_ok(t->pg, "DELETE FROM budget_ledger WHERE idempotency_key = 'd'");
    assert_query(t->pg, total,
                 "android-hw 2026-11-30 0, linux64 2026-11-30 1, linux64 2026-12-01 6");
    assert_query(t->pg,
                 "SELECT count(*) FROM (SELECT platform, day, sum(amount) FROM budget_ledger"
                 " GROUP BY 1, 2 EXCEPT SELECT platform, day, spent FROM budget_daily) d",
                 "0");
    exec_ok(t->pg, "TRUNCATE budget_ledger");
    assert_query(t->pg, "SELECT count(*) FROM budget_daily", "0");
}

/* The function files a migrate applied, by file name, in order. */
typedef struct applied_functions {
    size_t count;
    char files[64][128];
} applied_functions;

static void note_function(const rt_migration *m, void *arg)
{
    applied_functions *seen = arg;
    if (!m->is_function || seen->count >= 64) return;
    snprintf(seen->files[seen->count++], sizeof seen->files[0], "%s", m->file);
}

static size_t migrate_functions(test_db *t, const char *functions, applied_functions *seen)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t applied = 0;
    memset(seen, 0, sizeof *seen);
    if (rt_migrate_apply(t->pg, migrations_dir(), functions, note_function, seen, NULL, NULL,
                         &applied, errstr) != RT_OK)
        fail_msg("migrate: %s", errstr);
    assert_int_equal(applied, seen->count);
    return applied;
}

static void test_new_database_gets_every_function_file(void **state)
{
    test_db *t = *state;
    applied_functions seen;
    char sql[512];
    size_t files = 0;
    DIR *d = opendir(functions_dir());
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".sql")) files++;
    closedir(d);

    assert_true(files >= 20);
    assert_int_equal(migrate_functions(t, functions_dir(), &seen), files);
    for (size_t i = 1; i < seen.count; i++) /* in file name order: NN before name */
        assert_true(strcmp(seen.files[i - 1], seen.files[i]) < 0);
    for (size_t i = 0; i < seen.count; i++) {
        /* 30_history_flakes.sql made history_flakes (a function, an aggregate or a view) */
        const char *file = seen.files[i];
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT count(*) FROM pg_proc WHERE proname = '%.*s')"
                 " + (SELECT count(*) FROM pg_views WHERE viewname = '%.*s')",
                 (int)(strlen(file) - 7), file + 3, (int)(strlen(file) - 7), file + 3);
        assert_query(t->pg, sql, "1");
    }
    char count[32];
    snprintf(count, sizeof count, "%zu", files);
    assert_query(t->pg, "SELECT count(*) FROM schema_functions", count);
    assert_query(t->pg, "SELECT count(*) FROM pg_trigger WHERE tgname = 'budget_ledger_daily'",
                 "1");
    assert_query(t->pg,
                 "SELECT count(*) FROM pg_trigger WHERE tgname = 'history_runs_rollup_enqueue'"
                 " AND tgparentid = 0",
                 "1");

    rt_migration_list list;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_migrate_status(t->pg, migrations_dir(), functions_dir(), &list, errstr),
                     RT_OK);
    assert_int_equal(list.function_count, files);
    assert_int_equal(list.functions_pending, 0);
    assert_string_equal(list.functions[0].sha256, list.functions[0].recorded_sha256);
    rt_migration_list_free(&list);
}

static void test_unchanged_function_files_are_not_applied_again(void **state)
{
    test_db *t = *state;
    applied_functions seen;
    assert_true(migrate_functions(t, functions_dir(), &seen) >= 1);
    char *before = query_value(t->pg, "SELECT string_agg(name || ' ' || sha256 || ' ' ||"
                                      " applied_at, ',' ORDER BY name) FROM schema_functions");
    assert_int_equal(migrate_functions(t, functions_dir(), &seen), 0);
    char *after = query_value(t->pg, "SELECT string_agg(name || ' ' || sha256 || ' ' ||"
                                     " applied_at, ',' ORDER BY name) FROM schema_functions");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static const char BACKSTOP_COMMENT[] =
    "SELECT obj_description('budget_backstop(text, text, integer, integer, integer)'::regprocedure,"
    " 'pg_proc') = 'changed by test_migrate'";

/* Appends a statement to 10_budget_backstop.sql of the scratch copy: a changed file. */
static void change_budget_backstop(const char *functions)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/10_budget_backstop.sql", functions);
    char *text = rt_test_read_file(path, NULL);
    char *changed = NULL;
    assert_true(asprintf(&changed,
                         "%sCOMMENT ON FUNCTION budget_backstop(text, text, integer, integer,"
                         " integer) IS 'changed by test_migrate';\n",
                         text) > 0);
    rt_test_write_file(path, changed);
    free(changed);
    free(text);
}

static void test_changed_function_file_is_applied_again_alone(void **state)
{
    test_db *t = *state;
    applied_functions seen;
    const char *functions = copy_functions(t);
    assert_true(migrate_functions(t, functions, &seen) >= 1);
    char *sha = query_value(t->pg, "SELECT sha256 FROM schema_functions"
                                   " WHERE name = 'budget_backstop'");
    assert_query(t->pg, BACKSTOP_COMMENT, "f");

    change_budget_backstop(functions);
    rt_migration_list list;
    char errstr[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_migrate_status(t->pg, migrations_dir(), functions, &list, errstr), RT_OK);
    assert_int_equal(list.functions_pending, 1);
    rt_migration_list_free(&list);

    assert_int_equal(migrate_functions(t, functions, &seen), 1);
    assert_string_equal(seen.files[0], "10_budget_backstop.sql");
    assert_query(t->pg, BACKSTOP_COMMENT, "t");
    char *new_sha = query_value(t->pg, "SELECT sha256 FROM schema_functions"
                                       " WHERE name = 'budget_backstop'");
    assert_string_not_equal(sha, new_sha);
    free(sha);
    free(new_sha);
}

static void test_broken_function_file_rolls_back_every_function_file(void **state)
{
    test_db *t = *state;
    applied_functions seen;
    char errstr[RT_ERRSTR_SIZE] = "";
    size_t applied = 99;
    const char *functions = copy_functions(t);
    assert_true(migrate_functions(t, functions, &seen) >= 1);
    char *before = query_value(t->pg, "SELECT string_agg(name || ' ' || sha256, ','"
                                      " ORDER BY name) FROM schema_functions");

    /* a changed file that applies, then a broken one after it */
    change_budget_backstop(functions);
    write_in(functions, "15_broken_function.sql",
             "CREATE OR REPLACE FUNCTION broken_function() RETURNS bigint\n"
             "LANGUAGE sql STABLE AS $$ SELECT count(*) FROM no_such_table $$;\n");
    assert_int_equal(rt_migrate_apply(t->pg, migrations_dir(), functions, NULL, NULL, NULL, NULL,
                                      &applied, errstr),
                     RT_EDB);
    assert_non_null(strstr(errstr, "15_broken_function.sql"));
    assert_non_null(strstr(errstr, "no_such_table"));
    assert_int_equal(applied, 0);
    assert_false(rt_pg_in_transaction(t->pg));
    assert_query(t->pg, BACKSTOP_COMMENT, "f");
    assert_query(t->pg, "SELECT to_regproc('broken_function') IS NULL", "t");
    char *after = query_value(t->pg, "SELECT string_agg(name || ' ' || sha256, ','"
                                     " ORDER BY name) FROM schema_functions");
    assert_string_equal(before, after);
    free(before);
    free(after);

    /* once it is gone, the changed file is applied */
    char path[4096];
    snprintf(path, sizeof path, "%s/15_broken_function.sql", functions);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(migrate_functions(t, functions, &seen), 1);
    assert_query(t->pg, BACKSTOP_COMMENT, "t");
}

static void *run_migrator(void *arg)
{
    migrator *m = arg;
    rt_pg *pg = NULL;
    m->rc = rt_pg_connect_dbname(&pg, m->url, m->dbname, "test", m->errstr);
    if (m->rc == RT_OK)
        m->rc = rt_migrate_apply(pg, m->dir, m->functions_dir, NULL, NULL, &m->applied, NULL, NULL,
                                 m->errstr);
    rt_pg_free(pg);
    return NULL;
}

static void test_concurrent_migrators_apply_each_file_once(void **state)
{
    test_db *t = *state;
    char dir[4096];
    char functions[4096];
    snprintf(dir, sizeof dir, "%s", migrations_dir()); /* rt_test_source is not thread-safe */
    snprintf(functions, sizeof functions, "%s", functions_dir());
    migrator a = {
        .url = t->cfg.database_url, .dbname = t->name, .dir = dir, .functions_dir = functions};
    migrator b = a;
    pthread_t ta, tb;
    char errstr[RT_ERRSTR_SIZE] = "";
    rt_migration_list list;

    assert_int_equal(pthread_create(&ta, NULL, run_migrator, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, run_migrator, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    if (a.rc != RT_OK) fail_msg("first migrator: %s", a.errstr);
    if (b.rc != RT_OK) fail_msg("second migrator: %s", b.errstr);

    assert_int_equal(rt_migrate_status(t->pg, migrations_dir(), functions_dir(), &list, errstr),
                     RT_OK);
    assert_int_equal(a.applied + b.applied, list.count);
    assert_int_equal(list.pending, 0);
    rt_migration_list_free(&list);
}

int main(void)
{
#define DB_TEST(f) cmocka_unit_test_setup_teardown(f, setup_db, teardown_db)
    const struct CMUnitTest tests[] = {
        DB_TEST(test_budget_daily_is_the_ledger_total_per_platform_and_day),
        DB_TEST(test_migrate_applies_all_then_second_run_is_noop),
        DB_TEST(test_status_of_new_database_lists_everything_pending),
        DB_TEST(test_changed_applied_migration_is_refused),
        DB_TEST(test_applied_migration_missing_from_disk_is_refused),
        DB_TEST(test_bad_file_name_is_refused_before_anything_is_applied),
        DB_TEST(test_failing_migration_is_rolled_back_and_earlier_ones_stay),
        DB_TEST(test_sheriff_role_cannot_write),
        DB_TEST(test_retrigger_set_unique_per_project_revision_label),
        DB_TEST(test_culprit_search_state_is_kept_on_a_regression_decision),
        DB_TEST(test_concurrent_migrators_apply_each_file_once),
        DB_TEST(test_new_database_gets_every_function_file),
        DB_TEST(test_unchanged_function_files_are_not_applied_again),
        DB_TEST(test_changed_function_file_is_applied_again_alone),
        DB_TEST(test_broken_function_file_rolls_back_every_function_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
