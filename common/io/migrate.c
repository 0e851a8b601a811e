/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.c - numbered SQL migrations: read the directory, compare with schema_migrations,
 * apply what is pending under an advisory lock. See migrate.h for the rules. */
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

/* Reads a migration file whole; it must be text (no NUL byte) of a sane size. */
static int read_sql_file(const char *path, const char *name, char **text, size_t *len, char *errstr)
{
    char *buf = NULL, why[RT_ERRSTR_SIZE] = "";
    int rc = rt_file_read(path, (size_t)RT_MIGRATE_MAX_BYTES, &buf, len, why);
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "cannot read migration %s: %s", name, why);
        return rc;
    }
    if (memchr(buf, '\0', *len)) {
        rt_set_errstr(errstr, "migration %s contains a NUL byte; it must be SQL text", name);
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
        rc = read_sql_file(path, name, &m->sql, &sql_len, errstr);
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

int rt_migrate_status(rt_pg *pg, const char *dir, rt_migration_list *list, char *errstr)
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
    return check_consistent(list, dir, errstr);
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

int rt_migrate_apply(rt_pg *pg, const char *dir, rt_migrate_applied_fn *on_applied, void *arg,
                     size_t *applied_now, size_t *already_applied, char *errstr)
{
    const char *lock_key[1] = {RT_MIGRATE_LOCK_KEY};
    rt_migration_list list = {0};
    PGresult *res = NULL;
    bool locked = false;
    size_t done = 0;
    int rc;

    if (applied_now) *applied_now = 0;
    if (already_applied) *already_applied = 0;

    rc = rt_pg_exec(pg, SQL_LOCK, 1, lock_key, NULL);
    if (rc != RT_OK) {
        pg_failure(pg, rc, "taking the migration lock", errstr);
        goto out;
    }
    locked = true;
    rc = rt_pg_exec(pg, SQL_TABLE_EXISTS, 0, NULL, &res);
    if (rc != RT_OK) {
        pg_failure(pg, rc, "looking for schema_migrations", errstr);
        goto out;
    }
    if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
        rc = rt_pg_exec_script(pg, SQL_CREATE_TABLE);
        if (rc != RT_OK) {
            pg_failure(pg, rc, "creating schema_migrations", errstr);
            goto out;
        }
    }
    rc = rt_migrate_status(pg, dir, &list, errstr);
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
out:
    PQclear(res);
    if (locked && rt_pg_exec(pg, SQL_UNLOCK, 1, lock_key, NULL) != RT_OK) {
        /* A lost connection released the lock with the session. */
    }
    rt_migration_list_free(&list);
    return rc;
}
