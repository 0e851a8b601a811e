/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.c - numbered SQL migrations and SQL function files: read the directories, compare
 * with schema_migrations and schema_functions, apply what is pending under an advisory lock.
 * See migrate.h for the rules. */
#include "common/io/file.h"
#include "common/io/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#define RT_MIGRATE_MAX_FILES 10000
#define RT_MIGRATE_MAX_BYTES (16L * 1024 * 1024)

static const char SQL_TABLE_EXISTS[] = "SELECT to_regclass('schema_migrations') IS NOT NULL";

static const char SQL_CREATE_TABLE[] =
    "CREATE TABLE schema_migrations (\n"
    "    version    integer     PRIMARY KEY CHECK (version > 0),\n"
    "    name       text        NOT NULL UNIQUE,\n"
    "    sha256     text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),\n"
    "    applied_at timestamptz NOT NULL DEFAULT now()\n"
    ");\n"
    "COMMENT ON TABLE schema_migrations IS\n"
    "    'Migration files applied by retrig migrate: version, file name, SHA-256 of the file.';\n";

static const char SQL_FUNCTIONS_TABLE_EXISTS[] =
    "SELECT to_regclass('schema_functions') IS NOT NULL";

static const char SQL_CREATE_FUNCTIONS_TABLE[] =
    "CREATE TABLE schema_functions (\n"
    "    name       text        PRIMARY KEY,\n"
    "    file       text        NOT NULL,\n"
    "    sha256     text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),\n"
    "    applied_at timestamptz NOT NULL DEFAULT now()\n"
    ");\n"
    "COMMENT ON TABLE schema_functions IS\n"
    "    'SQL function files (sql/functions/NN_name.sql) applied by retrig migrate: name, file,"
    " SHA-256 of the file when last applied.';\n";

static const char SQL_SELECT_FUNCTIONS[] =
    "SELECT name, sha256,"
    " to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS applied_at"
    " FROM schema_functions ORDER BY name";
enum { F_NAME, F_SHA256, F_APPLIED_AT, F_N };
static const char *const FUNCTION_COLS[F_N] = {"name", "sha256", "applied_at"};

static const char SQL_RECORD_FUNCTION[] =
    "INSERT INTO schema_functions (name, file, sha256) VALUES ($1, $2, $3)"
    " ON CONFLICT (name) DO UPDATE SET file = EXCLUDED.file, sha256 = EXCLUDED.sha256,"
    " applied_at = now()"
    " RETURNING to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

static const char SQL_SELECT_APPLIED[] =
    "SELECT version, name, sha256,"
    " to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS applied_at"
    " FROM schema_migrations ORDER BY version";
enum { A_VERSION, A_NAME, A_SHA256, A_APPLIED_AT, A_N };
static const char *const APPLIED_COLS[A_N] = {"version", "name", "sha256", "applied_at"};

static const char SQL_INSERT_APPLIED[] =
    "INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3)"
    " RETURNING to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

static const char SQL_LOCK[] = "SELECT pg_advisory_lock($1::bigint)";
static const char SQL_UNLOCK[] = "SELECT pg_advisory_unlock($1::bigint)";

void rt_migration_list_free(rt_migration_list *list)
{
    if (!list) return;
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].file);
        free(list->items[i].sql);
    }
    free(list->items);
    for (size_t i = 0; i < list->function_count; i++) {
        free(list->functions[i].file);
        free(list->functions[i].sql);
    }
    free(list->functions);
    memset(list, 0, sizeof *list);
}

/* NNNN_name.sql with NNNN from 0001 and a name of [A-Za-z0-9_-]+; returns the version or 0. */
static int parse_file_name(const char *name)
{
    size_t len = strlen(name);
    int version = 0;

    if (len < 10 || strcmp(name + len - 4, ".sql") != 0 || name[4] != '_') return 0;
    for (int i = 0; i < 4; i++) {
        if (name[i] < '0' || name[i] > '9') return 0;
        version = version * 10 + (name[i] - '0');
    }
    for (size_t i = 5; i < len - 4; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return version;
}

static void sha256_hex(const char *data, size_t len, char hex_out[65])
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    static const char hex[] = "0123456789abcdef";
    SHA256((const unsigned char *)data, len, digest);
    for (size_t i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex_out[2 * i] = hex[digest[i] >> 4];
        hex_out[2 * i + 1] = hex[digest[i] & 0xf];
    }
    hex_out[64] = '\0';
}

/* Reads a migration or function file whole; it must be text (no NUL byte) of a sane size.
 * what ("migration", "SQL function file") names it in errstr. */
static int read_sql_file(const char *path, const char *what, const char *name, char **text,
                         size_t *len, char *errstr)
{
    char *buf = NULL, why[RT_ERRSTR_SIZE] = "";
    int rc = rt_file_read(path, (size_t)RT_MIGRATE_MAX_BYTES, &buf, len, why);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "cannot read %s %s: %s", what, name, why);
        return rc;
    }
    if (memchr(buf, '\0', *len)) {
        rt_set_errstr(errstr, "%s %s contains a NUL byte; it must be SQL text", what, name);
        free(buf);
        return RT_EINVAL;
    }
    *text = buf;
    return RT_OK;
}

/* The item for version, added (zeroed, version set) when the list has none; NULL on OOM. */
static rt_migration *item_for(rt_migration_list *list, size_t *cap, int version)
{
    size_t i = 0;
    while (i < list->count && list->items[i].version < version) i++;
    if (i < list->count && list->items[i].version == version) return &list->items[i];
    if (list->count == *cap) {
        size_t new_cap = *cap ? *cap * 2 : 16;
        rt_migration *grown = realloc(list->items, new_cap * sizeof *grown);
        if (!grown) return NULL;
        list->items = grown;
        *cap = new_cap;
    }
    memmove(&list->items[i + 1], &list->items[i], (list->count - i) * sizeof *list->items);
    memset(&list->items[i], 0, sizeof list->items[i]);
    list->items[i].version = version;
    list->count++;
    return &list->items[i];
}

static int read_directory(const char *dir, rt_migration_list *list, size_t *cap, char *errstr)
{
    DIR *d = opendir(dir);
    struct dirent *entry;
    char *path = NULL;
    int rc = RT_OK;

    if (!d) {
        rt_set_errstr(errstr, "cannot open the migrations directory %s: %s", dir, strerror(errno));
        return RT_EIO;
    }
    while ((entry = readdir(d)) != NULL) {
        const char *name = entry->d_name;
        size_t len = strlen(name);
        if (name[0] == '.' || len < 4 || strcmp(name + len - 4, ".sql") != 0) continue;
        int version = parse_file_name(name);
        if (version <= 0) {
            rt_set_errstr(errstr,
                          "bad migration file name %s: expected NNNN_name.sql "
                          "(four digits from 0001, then letters, digits, _ or -)",
                          name);
            rc = RT_EINVAL;
            goto out;
        }
        if (list->count >= RT_MIGRATE_MAX_FILES) {
            rt_set_errstr(errstr, "more than %d migration files in %s", RT_MIGRATE_MAX_FILES, dir);
            rc = RT_ETOOBIG;
            goto out;
        }
        rt_migration *m = item_for(list, cap, version);
        if (!m) goto oom;
        if (m->file) {
            rt_set_errstr(errstr, "migrations %s and %s have the same number", m->file, name);
            rc = RT_EINVAL;
            goto out;
        }
        m->file = strdup(name);
        if (!m->file || asprintf(&path, "%s/%s", dir, name) < 0) {
            path = NULL;
            goto oom;
        }
        size_t sql_len = 0;
        rc = read_sql_file(path, "migration", name, &m->sql, &sql_len, errstr);
        if (rc != RT_OK) goto out;
        sha256_hex(m->sql, sql_len, m->sha256);
        free(path);
        path = NULL;
    }
    goto out;
oom:
    rt_set_errstr(errstr, "out of memory reading %s", dir);
    rc = RT_ENOMEM;
out:
    free(path);
    closedir(d);
    return rc;
}

static int pg_failure(rt_pg *pg, int rc, const char *what, char *errstr)
{
    rt_set_errstr(errstr, "%s: %s", what, rt_pg_errstr(pg));
    return rc;
}

static int read_applied(rt_pg *pg, rt_migration_list *list, size_t *cap, char *errstr)
{
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, SQL_TABLE_EXISTS, 0, NULL, &res);
    if (rc != RT_OK) return pg_failure(pg, rc, "reading schema_migrations", errstr);
    bool exists = !strcmp(PQgetvalue(res, 0, 0), "t");
    PQclear(res);
    res = NULL;
    if (!exists) return RT_OK;

    rc = rt_pg_exec(pg, SQL_SELECT_APPLIED, 0, NULL, &res);
    if (rc != RT_OK) return pg_failure(pg, rc, "reading schema_migrations", errstr);
    int c[A_N];
    if ((rc = rt_pg_columns(res, APPLIED_COLS, A_N, c, errstr)) != RT_OK) goto out;
    for (int row = 0; row < PQntuples(res); row++) {
        int version = atoi(PQgetvalue(res, row, c[A_VERSION]));
        const char *name = PQgetvalue(res, row, c[A_NAME]);
        rt_migration *m = item_for(list, cap, version);
        if (!m) {
            rt_set_errstr(errstr, "out of memory");
            rc = RT_ENOMEM;
            goto out;
        }
        m->applied = true;
        snprintf(m->recorded_sha256, sizeof m->recorded_sha256, "%s",
                 PQgetvalue(res, row, c[A_SHA256]));
        snprintf(m->applied_at, sizeof m->applied_at, "%s", PQgetvalue(res, row, c[A_APPLIED_AT]));
        if (!m->file) {
            m->file = strdup(name);
            if (!m->file) {
                rt_set_errstr(errstr, "out of memory");
                rc = RT_ENOMEM;
                goto out;
            }
        } else if (strcmp(m->file, name) != 0) {
            rt_set_errstr(errstr, "migration %04d was applied as %s but the file now is %s",
                          version, name, m->file);
            rc = RT_ECONFLICT;
            goto out;
        }
        list->applied++;
    }
out:
    PQclear(res);
    return rc;
}

/* Directory and database must agree on everything already applied. */
static int check_consistent(const rt_migration_list *list, const char *dir, char *errstr)
{
    const rt_migration *last_applied = NULL;
    for (size_t i = 0; i < list->count; i++) {
        const rt_migration *m = &list->items[i];
        if (m->applied) last_applied = m;
        if (m->applied && !m->sql) {
            rt_set_errstr(errstr, "migration %s is recorded as applied but is missing from %s",
                          m->file, dir);
            return RT_ENOTFOUND;
        }
        if (m->applied && strcmp(m->sha256, m->recorded_sha256) != 0) {
            rt_set_errstr(errstr,
                          "migration %s changed after it was applied: recorded sha256 %s, "
                          "file now %s",
                          m->file, m->recorded_sha256, m->sha256);
            return RT_ECONFLICT;
        }
    }
    for (size_t i = 0; last_applied && i < list->count; i++) {
        const rt_migration *m = &list->items[i];
        if (!m->applied && m->version < last_applied->version) {
            rt_set_errstr(errstr,
                          "migration %s is pending but the later %s is already applied; "
                          "give it a number after %04d",
                          m->file, last_applied->file, last_applied->version);
            return RT_ECONFLICT;
        }
    }
    return RT_OK;
}

/* NN_name.sql with two digits and a name of [a-z0-9_]+ (the function's); returns NN or -1. */
static int parse_function_file_name(const char *file)
{
    size_t len = strlen(file);
    if (len < 8 || strcmp(file + len - 4, ".sql") != 0 || file[2] != '_') return -1;
    if (file[0] < '0' || file[0] > '9' || file[1] < '0' || file[1] > '9') return -1;
    for (size_t i = 3; i < len - 4; i++) {
        char c = file[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return -1;
    }
    return (file[0] - '0') * 10 + (file[1] - '0');
}

/* The name a function file is recorded under: "history_flakes" for 30_history_flakes.sql. */
static void function_name(const char *file, char *out, size_t size)
{
    snprintf(out, size, "%.*s", (int)(strlen(file) - 7), file + 3);
}

static int compare_files(const void *a, const void *b)
{
    return strcmp(((const rt_migration *)a)->file, ((const rt_migration *)b)->file);
}

/* Adds one function file of dir to list->functions. */
static int read_function_file(const char *dir, const char *file, rt_migration_list *list,
                              size_t *cap, char *errstr)
{
    char *path = NULL;
    size_t sql_len = 0;
    int rc;
    if (list->function_count == *cap) {
        size_t new_cap = *cap ? *cap * 2 : 32;
        rt_migration *grown = realloc(list->functions, new_cap * sizeof *grown);
        if (!grown) goto oom;
        list->functions = grown;
        *cap = new_cap;
    }
    rt_migration *f = &list->functions[list->function_count];
    memset(f, 0, sizeof *f);
    f->version = parse_function_file_name(file);
    f->is_function = true;
    f->file = strdup(file);
    if (!f->file) goto oom;
    list->function_count++;
    if (asprintf(&path, "%s/%s", dir, file) < 0) {
        path = NULL;
        goto oom;
    }
    rc = read_sql_file(path, "SQL function file", file, &f->sql, &sql_len, errstr);
    if (rc == RT_OK) sha256_hex(f->sql, sql_len, f->sha256);
    free(path);
    return rc;
oom:
    rt_set_errstr(errstr, "out of memory reading %s", dir);
    return RT_ENOMEM;
}

/* Every NN_name.sql of dir into list->functions, by file name; two files of one name refused. */
static int read_functions_directory(const char *dir, rt_migration_list *list, char *errstr)
{
    DIR *d = opendir(dir);
    struct dirent *entry;
    size_t cap = 0;
    int rc = RT_OK;

    if (!d) {
        rt_set_errstr(errstr, "cannot open the SQL functions directory %s: %s", dir,
                      strerror(errno));
        return RT_EIO;
    }
    while ((entry = readdir(d)) != NULL) {
        const char *file = entry->d_name;
        size_t len = strlen(file);
        if (file[0] == '.' || len < 4 || strcmp(file + len - 4, ".sql") != 0) continue;
        if (parse_function_file_name(file) < 0) {
            rt_set_errstr(errstr,
                          "bad SQL function file name %s in %s: expected NN_name.sql (two "
                          "digits, then the function's name in a-z, 0-9 and _)",
                          file, dir);
            rc = RT_EINVAL;
            goto out;
        }
        if (list->function_count >= RT_MIGRATE_MAX_FILES) {
            rt_set_errstr(errstr, "more than %d SQL function files in %s", RT_MIGRATE_MAX_FILES,
                          dir);
            rc = RT_ETOOBIG;
            goto out;
        }
        rc = read_function_file(dir, file, list, &cap, errstr);
        if (rc != RT_OK) goto out;
    }
    if (list->function_count)
        qsort(list->functions, list->function_count, sizeof *list->functions, compare_files);
    for (size_t i = 0; i < list->function_count; i++) {
        for (size_t j = i + 1; j < list->function_count; j++) {
            if (!strcmp(list->functions[i].file + 3, list->functions[j].file + 3)) {
                rt_set_errstr(errstr, "SQL function files %s and %s define the same name",
                              list->functions[i].file, list->functions[j].file);
                rc = RT_EINVAL;
                goto out;
            }
        }
    }
out:
    closedir(d);
    return rc;
}

/* Marks each function file recorded in schema_functions with the SHA-256 it was applied with. */
static int read_applied_functions(rt_pg *pg, rt_migration_list *list, char *errstr)
{
    PGresult *res = NULL;
    char name[256];
    int rc = rt_pg_exec(pg, SQL_FUNCTIONS_TABLE_EXISTS, 0, NULL, &res);
    if (rc != RT_OK) return pg_failure(pg, rc, "reading schema_functions", errstr);
    bool exists = !strcmp(PQgetvalue(res, 0, 0), "t");
    PQclear(res);
    res = NULL;
    if (!exists) return RT_OK;

    rc = rt_pg_exec(pg, SQL_SELECT_FUNCTIONS, 0, NULL, &res);
    if (rc != RT_OK) return pg_failure(pg, rc, "reading schema_functions", errstr);
    int c[F_N];
    if ((rc = rt_pg_columns(res, FUNCTION_COLS, F_N, c, errstr)) != RT_OK) goto out;
    for (int row = 0; row < PQntuples(res); row++) {
        for (size_t i = 0; i < list->function_count; i++) {
            rt_migration *f = &list->functions[i];
            function_name(f->file, name, sizeof name);
            if (strcmp(name, PQgetvalue(res, row, c[F_NAME])) != 0) continue;
            snprintf(f->recorded_sha256, sizeof f->recorded_sha256, "%s",
                     PQgetvalue(res, row, c[F_SHA256]));
            snprintf(f->applied_at, sizeof f->applied_at, "%s",
                     PQgetvalue(res, row, c[F_APPLIED_AT]));
            f->applied = !strcmp(f->recorded_sha256, f->sha256);
        }
    }
out:
    PQclear(res);
    return rc;
}

int rt_migrate_status(rt_pg *pg, const char *dir, const char *functions_dir,
                      rt_migration_list *list, char *errstr)
{
    size_t cap = 0;
    int rc;

    memset(list, 0, sizeof *list);
    rc = read_directory(dir, list, &cap, errstr);
    if (rc != RT_OK) return rc;
    rc = read_applied(pg, list, &cap, errstr);
    if (rc != RT_OK) return rc;
    for (size_t i = 0; i < list->count; i++) {
        if (!list->items[i].applied) list->pending++;
    }
    rc = check_consistent(list, dir, errstr);
    if (rc != RT_OK || !functions_dir) return rc;
    rc = read_functions_directory(functions_dir, list, errstr);
    if (rc != RT_OK) return rc;
    rc = read_applied_functions(pg, list, errstr);
    for (size_t i = 0; i < list->function_count; i++) {
        if (!list->functions[i].applied) list->functions_pending++;
    }
    return rc;
}

/* One file and its schema_migrations row, in one transaction. */
static int apply_one(rt_pg *pg, rt_migration *m, char *errstr)
{
    PGresult *res = NULL;
    char version[16];
    int rc;

    snprintf(version, sizeof version, "%d", m->version);
    const char *params[3] = {version, m->file, m->sha256};

    rc = rt_pg_begin(pg);
    if (rc != RT_OK) goto fail;
    rc = rt_pg_exec_script(pg, m->sql);
    if (rc != RT_OK) goto fail;
    if (PQtransactionStatus(rt_pg_conn(pg)) != PQTRANS_INTRANS) {
        rt_set_errstr(errstr,
                      "migration %s ended the transaction it runs in; remove its own "
                      "BEGIN/COMMIT",
                      m->file);
        rc = RT_EINVAL;
        goto out;
    }
    rc = rt_pg_exec(pg, SQL_INSERT_APPLIED, 3, params, &res);
    if (rc != RT_OK) goto fail;
    rc = rt_pg_commit(pg);
    if (rc != RT_OK) goto fail;
    m->applied = true;
    memcpy(m->recorded_sha256, m->sha256, sizeof m->recorded_sha256);
    snprintf(m->applied_at, sizeof m->applied_at, "%s", PQgetvalue(res, 0, 0));
    goto out;
fail:
    rt_set_errstr(errstr, "migration %s failed: %s", m->file, rt_pg_errstr(pg));
out:
    PQclear(res);
    if (rc != RT_OK && rt_pg_rollback(pg) != RT_OK) {
        /* The connection is gone; so is the transaction. errstr already says what failed. */
    }
    return rc;
}

/* The function files that changed (all of them when every is true) and their schema_functions
 * rows, in one transaction: one that fails rolls them all back. *count: the files applied. */
static int apply_functions(rt_pg *pg, rt_migration_list *list, bool every,
                           rt_migrate_applied_fn *on_applied, void *arg, size_t *count,
                           char *errstr)
{
    PGresult *res = NULL;
    const char *failed = NULL;
    char name[256];
    size_t done = 0;
    int rc = rt_pg_begin(pg);
    if (rc != RT_OK) goto fail;
    for (size_t i = 0; i < list->function_count; i++) {
        rt_migration *f = &list->functions[i];
        if (f->applied && !every) continue;
        failed = f->file;
        rc = rt_pg_exec_script(pg, f->sql);
        if (rc != RT_OK) goto fail;
        if (PQtransactionStatus(rt_pg_conn(pg)) != PQTRANS_INTRANS) {
            rt_set_errstr(errstr,
                          "SQL function file %s ended the transaction it runs in; remove its "
                          "own BEGIN/COMMIT",
                          f->file);
            rc = RT_EINVAL;
            goto out;
        }
        function_name(f->file, name, sizeof name);
        const char *params[3] = {name, f->file, f->sha256};
        rc = rt_pg_exec(pg, SQL_RECORD_FUNCTION, 3, params, &res);
        if (rc != RT_OK) goto fail;
        snprintf(f->applied_at, sizeof f->applied_at, "%s", PQgetvalue(res, 0, 0));
        PQclear(res);
        res = NULL;
    }
    failed = NULL;
    rc = rt_pg_commit(pg);
    if (rc != RT_OK) goto fail;
    for (size_t i = 0; i < list->function_count; i++) {
        rt_migration *f = &list->functions[i];
        if (f->applied && !every) continue;
        f->applied = true;
        memcpy(f->recorded_sha256, f->sha256, sizeof f->recorded_sha256);
        done++;
        if (on_applied) on_applied(f, arg);
    }
    list->functions_pending = 0;
    *count = done;
    goto out;
fail:
    if (failed)
        rt_set_errstr(errstr, "SQL function file %s failed (no function file applied): %s", failed,
                      rt_pg_errstr(pg));
    else
        rt_set_errstr(errstr, "applying the SQL function files failed: %s", rt_pg_errstr(pg));
out:
    PQclear(res);
    if (rc != RT_OK && rt_pg_rollback(pg) != RT_OK) {
        /* The connection is gone; so is the transaction. errstr already says what failed. */
    }
    return rc;
}

/* Creates the bookkeeping table named by exists_sql with create_sql when it is missing. */
static int ensure_table(rt_pg *pg, const char *exists_sql, const char *create_sql, const char *what,
                        char *errstr)
{
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, exists_sql, 0, NULL, &res);
    if (rc != RT_OK) return pg_failure(pg, rc, what, errstr);
    bool exists = !strcmp(PQgetvalue(res, 0, 0), "t");
    PQclear(res);
    if (exists) return RT_OK;
    rc = rt_pg_exec_script(pg, create_sql);
    if (rc != RT_OK) return pg_failure(pg, rc, what, errstr);
    return RT_OK;
}

int rt_migrate_apply(rt_pg *pg, const char *dir, const char *functions_dir,
                     rt_migrate_applied_fn *on_applied, void *arg, size_t *applied_now,
                     size_t *already_applied, size_t *functions_applied, char *errstr)
{
    const char *lock_key[1] = {RT_MIGRATE_LOCK_KEY};
    rt_migration_list list = {0};
    bool locked = false;
    size_t done = 0, functions_done = 0;
    int rc;

    if (applied_now) *applied_now = 0;
    if (already_applied) *already_applied = 0;
    if (functions_applied) *functions_applied = 0;

    rc = rt_pg_exec(pg, SQL_LOCK, 1, lock_key, NULL);
    if (rc != RT_OK) {
        pg_failure(pg, rc, "taking the migration lock", errstr);
        goto out;
    }
    locked = true;
    rc = ensure_table(pg, SQL_TABLE_EXISTS, SQL_CREATE_TABLE, "creating schema_migrations", errstr);
    if (rc != RT_OK) goto out;
    if (functions_dir) {
        rc = ensure_table(pg, SQL_FUNCTIONS_TABLE_EXISTS, SQL_CREATE_FUNCTIONS_TABLE,
                          "creating schema_functions", errstr);
        if (rc != RT_OK) goto out;
    }
    rc = rt_migrate_status(pg, dir, functions_dir, &list, errstr);
    if (rc != RT_OK) goto out;
    if (already_applied) *already_applied = list.applied;

    for (size_t i = 0; i < list.count; i++) {
        rt_migration *m = &list.items[i];
        if (m->applied) continue;
        rc = apply_one(pg, m, errstr);
        if (rc != RT_OK) goto out;
        done++;
        if (applied_now) *applied_now = done;
        if (on_applied) on_applied(m, arg);
    }
    if (list.functions_pending || (done && list.function_count)) {
        rc = apply_functions(pg, &list, done > 0, on_applied, arg, &functions_done, errstr);
        if (rc != RT_OK) goto out;
        if (functions_applied) *functions_applied = functions_done;
    }
out:
    if (locked && rt_pg_exec(pg, SQL_UNLOCK, 1, lock_key, NULL) != RT_OK) {
        /* A lost connection released the lock with the session. */
    }
    rt_migration_list_free(&list);
    return rc;
}
