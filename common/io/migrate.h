/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.h - applies numbered SQL migrations from a directory, forward only, then the SQL
 * function files that changed.
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
 *
 * SQL functions (sql/functions/, see its README.md) are not migrations: each file NN_name.sql
 * holds the current definition of one function or view (CREATE OR REPLACE, its COMMENT, the
 * triggers that call it) and may be applied any number of times. NN orders them (a file calls
 * only functions of files with a smaller NN). The table schema_functions records name (the file
 * name without NN_ and .sql), file, SHA-256 and applied_at of each. After the pending migrations,
 * rt_migrate_apply applies in one transaction, in file name order, every function file whose
 * SHA-256 differs from the recorded one, or every file when this call applied a migration (a
 * migration may have dropped what a file made, a view with the table under it); a file that
 * fails rolls back all of them, naming the file. A migration never calls a function of
 * sql/functions: on a new database the functions come after every migration.
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

/* A migration, or a function file (is_function: version is its NN, applied means recorded with
 * the SHA-256 the file has now, recorded_sha256 is "" when it was never applied). */
typedef struct rt_migration {
    int version;
    bool is_function;
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
    size_t function_count;
    rt_migration *functions;  /* the function files, by file name; none without functions_dir */
    size_t functions_pending; /* new or changed since they were applied */
} rt_migration_list;

/* Called after each file is committed (function files: after all of them are). */
typedef void rt_migrate_applied_fn(const rt_migration *migration, void *arg);

/* What the directories and the database hold, without changing anything (a database that
 * was never migrated has everything pending). functions_dir may be NULL: no function files.
 * When the two disagree (see above) returns that error, with the list still filled so that it
 * can be shown; free it in every case. */
RT_MUSTCHECK int rt_migrate_status(rt_pg *pg, const char *dir, const char *functions_dir,
                                   rt_migration_list *list, char *errstr);

/* Applies every pending migration in dir, then the function files of functions_dir (NULL:
 * none) as above. *applied_now (may be NULL) counts the migrations applied by this call,
 * including when a later one fails; *already_applied (may be NULL) those that were applied
 * before; *functions_applied (may be NULL) the function files this call applied (0 when one
 * failed). On failure errstr (RT_ERRSTR_SIZE) names the file. */
RT_MUSTCHECK int rt_migrate_apply(rt_pg *pg, const char *dir, const char *functions_dir,
                                  rt_migrate_applied_fn *on_applied, void *arg, size_t *applied_now,
                                  size_t *already_applied, size_t *functions_applied, char *errstr);

void rt_migration_list_free(rt_migration_list *list);

#endif
