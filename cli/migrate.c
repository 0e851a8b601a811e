/* SPDX-License-Identifier: MPL-2.0 */
/* migrate.c - `retrig migrate`: apply pending SQL migrations and changed SQL function files,
 * or list them with --status. Human lines go to stdout; errors are log lines on stderr. */
#include "cli/cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "common/io/log.h"
#include "common/io/migrate.h"
#include "common/io/pg.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: retrig migrate [--status] [--dir DIR] [--functions-dir DIR]\n"
            "\n"
            "Applies the pending numbered SQL migrations in migrations_dir to database_url,\n"
            "each in its own transaction, under an advisory lock. Refuses to run when an\n"
            "applied file was changed or removed. Then applies, in one transaction, every SQL\n"
            "function file (NN_name.sql, in <migrations_dir>/../sql/functions) that changed\n"
            "since it was last applied, or all of them when a migration was applied.\n"
            "\n"
            "options:\n"
            "  --status             list applied and pending migrations and function files;\n"
            "                       change nothing\n"
            "  --dir DIR            migrations directory (overrides migrations_dir)\n"
            "  --functions-dir DIR  SQL functions directory (default: DIR/../sql/functions)\n"
            "  -h, --help           print this help\n");
}

static void print_applied(const rt_migration *m, void *arg)
{
    (void)arg;
    printf("applied %s%s (sha256 %.12s)\n", m->is_function ? "function " : "", m->file, m->sha256);
    fflush(stdout);
}

static int show_status(rt_pg *pg, const char *dir, const char *functions_dir)
{
    rt_migration_list list;
    char errstr[RT_ERRSTR_SIZE] = "";
    int rc = rt_migrate_status(pg, dir, functions_dir, &list, errstr);

    for (size_t i = 0; i < list.count; i++) {
        const rt_migration *m = &list.items[i];
        if (m->applied)
            printf("applied  %s  %s  sha256 %.12s\n", m->file, m->applied_at, m->recorded_sha256);
        else
            printf("pending  %s\n", m->file);
    }
    printf("status: %zu applied, %zu pending (%s)\n", list.applied, list.pending, dir);
    for (size_t i = 0; i < list.function_count; i++) {
        const rt_migration *f = &list.functions[i];
        if (f->applied)
            printf("applied  function %s  %s  sha256 %.12s\n", f->file, f->applied_at,
                   f->recorded_sha256);
        else if (f->recorded_sha256[0])
            printf("pending  function %s  changed since %s\n", f->file, f->applied_at);
        else
            printf("pending  function %s\n", f->file);
    }
    if (rc == RT_OK)
        printf("functions: %zu applied, %zu pending (%s)\n",
               list.function_count - list.functions_pending, list.functions_pending, functions_dir);
    rt_migration_list_free(&list);
    if (rc != RT_OK) {
        rt_log_error("migrations and database disagree", "error", errstr, "dir", dir);
        return 1;
    }
    return 0;
}

int rt_cli_migrate(int argc, char **argv, rt_config *cfg)
{
    static const struct option options[] = {
        {"dir", required_argument, NULL, 'd'},
        {"functions-dir", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {"status", no_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = cfg->migrations_dir, *functions_dir = NULL;
    char errstr[RT_ERRSTR_SIZE] = "", derived[PATH_MAX];
    bool status_only = false;
    rt_pg *pg = NULL;
    int c, status = 1;

    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'f': functions_dir = optarg; break;
        case 's': status_only = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        rt_log_error("retrig migrate takes no arguments", "argument", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!dir || !*dir) {
        rt_log_error("no migrations directory: set migrations_dir or pass --dir");
        return 2;
    }
    if (!functions_dir) {
        /* migrations/ and sql/functions/ sit side by side, in the source tree as installed */
        int len = snprintf(derived, sizeof derived, "%s/../sql/functions", dir);
        if (len < 0 || (size_t)len >= sizeof derived) {
            rt_log_error("migrations directory path too long", "dir", dir);
            return 2;
        }
        functions_dir = derived;
    }
    if (!cfg->database_url || !*cfg->database_url) {
        rt_log_error("database_url is not set");
        return 2;
    }

    if (rt__cli_connect(cfg, "migrate", &pg) != 0) goto out;
    if (status_only) {
        status = show_status(pg, dir, functions_dir);
        goto out;
    }

    size_t applied_now = 0, already_applied = 0, functions_applied = 0;
    int rc = rt_migrate_apply(pg, dir, functions_dir, print_applied, NULL, &applied_now,
                              &already_applied, &functions_applied, errstr);
    if (rc != RT_OK) {
        rt_log_error("migration failed", "error", errstr, "code", rt_strerror(rc), "dir", dir,
                     "functions_dir", functions_dir);
        printf("failed: %zu applied before the error\n", applied_now);
        goto out;
    }
    printf("done: %zu applied, %zu already applied; %zu function files applied\n", applied_now,
           already_applied, functions_applied);
    status = 0;
out:
    rt_pg_free(pg);
    return status;
}
