/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.h - applies numbered SQL migrations from a directory, forward only.
 *
 * Files are named NNNN_name.sql (four digits from 0001, then letters, digits, '_' or '-');
 * other *.sql names are an error, files not ending in .sql are ignored. The table
 * schema_migrations records each applied file: version, file name, SHA-256 of its bytes,
 * applied_at. rt_migrate_apply takes a session advisory lock (so concurrent migrators of the
 * same database queue up), checks everything before changing anything, then applies each
 * pending file in its own transaction together with its schema_migrations row.
 *
 * Refused before anything is applied: an applied file whose bytes changed (RT_ECONFLICT,
 * naming the file and both checksums), an applied file missing from the directory
 * (RT_ENOTFOUND), a file recorded under another name (RT_ECONFLICT), a pending file older
 * than an applied one (RT_ECONFLICT: renumber it), a bad file name (RT_EINVAL).
 * Not thread-safe (uses the caller's rt_pg handle). */
#ifndef RETRIG_COMMON_MIGRATE_H
#define RETRIG_COMMON_MIGRATE_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* The advisory lock key (pg_advisory_lock) held while migrating. */
#define RT_MIGRATE_LOCK_KEY "7299256412345178419"

typedef struct rt_migration {
    int version;
    char *file;               /* "0001_initial.sql" (from disk, else as recorded) */
    char *sql;                /* the file's text; NULL when missing from disk */
    char sha256[65];          /* of the file on disk; "" when missing from disk */
    bool applied;             /* recorded in schema_migrations */
    char recorded_sha256[65]; /* as recorded; "" when pending */
    char applied_at[32];      /* UTC, "2024-05-01T10:00:00Z"; "" when pending */
} rt_migration;

typedef struct rt_migration_list {
    size_t count;
    rt_migration *items; /* by version */
    size_t applied;      /* how many are recorded in schema_migrations */
    size_t pending;      /* how many are on disk and not recorded */
} rt_migration_list;

/* Called after each file is committed. */
typedef void rt_migrate_applied_fn(const rt_migration *migration, void *arg);

/* What the directory and the database hold, without changing anything (a database that
 * was never migrated has everything pending). When the two disagree (see above) returns
 * that error, with the list still filled so that it can be shown; free it in every case. */
RT_MUSTCHECK int rt_migrate_status(rt_pg *pg, const char *dir, rt_migration_list *list,
                                   char *errstr);

/* Applies every pending migration in dir. *applied_now (may be NULL) counts the files
 * applied by this call, including when a later one fails; *already_applied (may be NULL)
 * those that were applied before. On failure errstr (RT_ERRSTR_SIZE) names the file. */
RT_MUSTCHECK int rt_migrate_apply(rt_pg *pg, const char *dir, rt_migrate_applied_fn *on_applied,
                                  void *arg, size_t *applied_now, size_t *already_applied,
                                  char *errstr);

void rt_migration_list_free(rt_migration_list *list);

#endif
