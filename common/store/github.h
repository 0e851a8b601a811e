/* SPDX-License-Identifier: MPL-2.0 */
/* github.h - the store of `retrig collect-github`'s collection (github_collect_state,
 * github_runs, github_run_files, github_run_gaps, github_etags): where a workflow's last
 * pass got to, which attempts of a run are stored, a run attempt with its JUnit files and
 * gaps, and the ETag of an unchanged first listing page. The statements were
 * cli/collect_github.c's until issue 33; they live in github.c and no PGresult leaves it.
 * Texts in are passed as SQL text parameters (NULL is SQL NULL).
 * Errors: RT_EDB (rt_pg_errstr), RT_ECONN, RT_ENOMEM. Thread-safety: per rt_pg handle.
 * Layer: common/store. */
#ifndef RETRIG_COMMON_STORE_GITHUB_H
#define RETRIG_COMMON_STORE_GITHUB_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

/* The newest run creation time stored for (repository, workflow), "YYYY-MM-DDTHH:MM:SSZ";
 * *known false when none. */
RT_MUSTCHECK int rt_gh_store_newest(rt_pg *pg, const char *repository, const char *workflow,
                                    char newest[32], bool *known);
/* A pass starts (the state row is created when there is none). */
RT_MUSTCHECK int rt_gh_store_pass_started(rt_pg *pg, const char *repository, const char *workflow);
/* A pass ends: stop_reason NULL when it went through (then last_pass_finished moves). */
RT_MUSTCHECK int rt_gh_store_pass_finished(rt_pg *pg, const char *repository, const char *workflow,
                                           const char *stop_reason);

/* The attempts 1..n of the run stored before: known[a - 1], and starts[a - 1] their run
 * start (seconds since the epoch). */
RT_MUSTCHECK int rt_gh_store_attempts(rt_pg *pg, const char *repository, long long run_id, int n,
                                      bool *known, time_t *starts);

/* A github_runs row, its members as SQL texts (NULL is SQL NULL). */
typedef struct rt_gh_run_row {
    const char *repository, *run_id, *attempt, *workflow_id, *workflow_path, *workflow_name;
    const char *event, *conclusion, *head_branch, *head_sha, *head_repository, *pr;
    const char *branch_key;
    bool main;
    const char *html_url, *created_at, *run_started_at; /* seconds since the epoch */
    const char *artifacts, *expired_artifacts, *junit_files, *outcomes;
    const char *author_association;
} rt_gh_run_row;
/* Inside the caller's transaction: the run attempt's row; *fresh false when it was stored
 * before (another collector, meanwhile). */
RT_MUSTCHECK int rt_gh_store_run(rt_pg *pg, const rt_gh_run_row *row, bool *fresh);
/* A JUnit file of the attempt, tied to the history run stored under run_key. */
RT_MUSTCHECK int rt_gh_store_file(rt_pg *pg, const char *repository, const char *run_key,
                                  const char *run_id, const char *attempt, const char *artifact,
                                  const char *file);
/* What of the attempt could not be used (kind: no-junit-artifact, unparsable-file, ...). */
RT_MUSTCHECK int rt_gh_store_gap(rt_pg *pg, const char *repository, const char *run_id,
                                 const char *attempt, const char *kind, const char *artifact,
                                 const char *file, const char *detail);
/* The workflow's state after a stored run: runs_stored + 1, and the newest run (created:
 * seconds since the epoch). */
RT_MUSTCHECK int rt_gh_store_run_counted(rt_pg *pg, const char *repository, const char *workflow,
                                         const char *run_id, const char *created);

/* The ETag stored for url (malloc'd; NULL when none or on error). */
char *rt_gh_store_etag(rt_pg *pg, const char *url);
RT_MUSTCHECK int rt_gh_store_etag_put(rt_pg *pg, const char *url, const char *etag);

#endif
