/* SPDX-License-Identifier: MPL-2.0 */
/* config.h - retrig's configuration: one struct filled from a key table.
 *
 * Order: built-in defaults, then the file named by RETRIG_CONFIG (or --config), then
 * RETRIG_<KEY> environment variables. The file holds "key = value" lines; '#' starts a
 * comment (at the start of a line, or after a space); values may be double-quoted. An unknown key,
 * an unknown RETRIG_* variable or a bad value is an error that names the key (callers exit 2).
 * Secrets (the Taskcluster access token, the Pulse password) may come from the environment or from
 * a file named by a *_file key, and are registered with the logger so they are never printed. Not
 * thread-safe while loading; read-only afterwards. */
#ifndef RETRIG_COMMON_CONFIG_H
#define RETRIG_COMMON_CONFIG_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/core/errors.h"
#include "common/core/strlist.h"
#include "common/io/log.h"

#define RT_CONFIG_MAX_LIST RT_STRLIST_MAX
#define RT_CONFIG_LEVELS   3 /* Taskcluster trust levels 1..3 (common/core/trust.h) */

/* A list-valued key: the core's string list (common/core/strlist.h). */
typedef rt_strlist rt_config_list;

typedef struct rt_config {
    char *amqp_ca_file;
    char *amqp_namespace;
    int amqp_prefetch;
    bool amqp_quorum_queues;
    char *amqp_url;
    rt_config_list budget_limits;
    int budget_minimum;
    char *bugzilla_api_key;
    char *bugzilla_api_key_file;
    rt_config_list bugzilla_components;
    rt_config_list bugzilla_keywords;
    char *bugzilla_url;
    int classify_concurrency;
    double culprit_confidence;
    int culprit_max_depth;
    int culprit_max_jobs;
    int culprit_poll_interval_s;
    int culprit_probe_deadline_minutes;
    rt_config_list culprit_projects;
    char *database_url;
    bool decide_cancel_pending;
    double decide_confidence;
    rt_config_list decide_delays_ms;
    int decide_max_retriggers;
    char *decide_policy;
    int decide_pool_deadline_minutes;
    int decide_pool_settle_s;
    double decide_prior_regression;
    int decide_sweep_interval_s;
    int decide_threshold;
    int drain_timeout_ms;
    bool dry_run;
    long errorsummary_max_bytes;
    char *flaky_issue_label;
    bool flaky_issue_on_main;
    int flaky_issue_quiet_days;
    char *flaky_issue_tracker;
    int flaky_issues_max_new;
    rt_config_list flaky_issues_trusted_associations;
    char *github_api_url;
    int github_listing_cap;
    int github_rate_limit_reserve;
    int github_secondary_wait_s;
    char *github_token;
    char *github_token_file;
    int history_batch_size;
    int history_flaky_min_branches;
    int history_flaky_window_days;
    rt_config_list history_main_projects;
    rt_config_list history_projects;
    char *history_read_url;
    char *history_repository;
    int history_retention_days;
    int history_sample_percent;
    int http_backoff_base_ms;
    int http_backoff_max_ms;
    char *http_ca_file;
    int http_connect_timeout_ms;
    int http_max_attempts;
    long http_max_body_bytes;
    int http_timeout_ms;
    char *log_format;
    rt_log_level log_level;
    long max_message_bytes;
    int message_time_budget_ms;
    char *metrics_bind;
    int metrics_port;
    char *migrations_dir;
    int perf_backfill_depth;
    int perf_backfill_times;
    rt_config_list perf_budget_limits;
    int perf_followup_window_hours;
    rt_config_list perf_frameworks;
    bool perf_include_improvements;
    int perf_interval_s;
    int perf_lookback_hours;
    int perf_max_per_summary;
    int perf_min_age_minutes;
    int perf_min_amount_pct;
    rt_config_list perf_platform_families;
    rt_config_list perf_repositories;
    rt_config_list pool_prefixes;
    rt_config_list project_levels;
    rt_config_list projects;
    bool pulse_declare_exchanges;
    char *pulse_exchange_prefix;
    char *pulse_password_file;
    char *pulse_queue_name;
    rt_config_list pulse_routing_keys;
    char *pulse_url;
    char *redis_url;
    char *redis_key_prefix;
    rt_config_list retry_delays_ms;
    char *retrigger_action;
    int retriggers_per_failure;
    int set_deadline_minutes;
    int task_cache_size;
    char *taskcluster_access_token;
    char *taskcluster_access_token_file;
    char *taskcluster_access_token_level[RT_CONFIG_LEVELS];      /* levels 1..3 */
    char *taskcluster_access_token_level_file[RT_CONFIG_LEVELS]; /* levels 1..3 */
    char *taskcluster_certificate;
    char *taskcluster_client_id;
    char *taskcluster_client_id_level[RT_CONFIG_LEVELS]; /* levels 1..3 */
    char *taskcluster_hook_group;
    char *taskcluster_root_url;
    rt_config_list tiers;
    char *treeherder_url;

    char source[512]; /* the file read, or "" */
} rt_config;

typedef enum {
    RT_CFG_STRING,
    RT_CFG_INT,
    RT_CFG_LONG,
    RT_CFG_BOOL,
    RT_CFG_LEVEL,
    RT_CFG_LIST,
    RT_CFG_DOUBLE /* min and max in millionths: 500000 is 0.5 */
} rt_config_type;

typedef struct rt_config_key {
    const char *name; /* key in the file; RETRIG_<NAME upper-cased> in the environment */
    rt_config_type type;
    size_t offset;
    const char *default_value; /* NULL: unset */
    long min, max;             /* for numbers */
    bool secret;               /* never printed */
    const char *help;
} rt_config_key;

/* The key table, alphabetical, ended by an entry whose name is NULL. */
extern const rt_config_key rt_config_keys[];

/* Defaults, then the file (path, or $RETRIG_CONFIG when path is NULL, or none), then the
 * environment. On failure returns RT_ECONFIG with errstr naming the file or the key. */
RT_MUSTCHECK int rt_config_load(rt_config *cfg, const char *path, char *errstr);
/* Only the defaults. */
RT_MUSTCHECK int rt_config_defaults(rt_config *cfg, char *errstr);
/* Parses "key = value" text (origin names it in errors). */
RT_MUSTCHECK int rt_config_parse_text(rt_config *cfg, const char *text, size_t len,
                                      const char *origin, char *errstr);
/* Sets one key from its text form, validating it. */
RT_MUSTCHECK int rt_config_set(rt_config *cfg, const char *key, const char *value,
                               const char *origin, char *errstr);
/* Frees everything the struct owns; safe on a zeroed or partly filled struct. */
void rt_config_free(rt_config *cfg);
/* A deep copy of from into cfg (free it with rt_config_free). RT_ENOMEM leaves cfg empty. */
RT_MUSTCHECK int rt_config_copy(rt_config *cfg, const rt_config *from);
/* Prints the effective configuration as "key = value" lines, secrets as "***" (and
 * database_url's password as rt_config_mask_conninfo masks it). */
void rt_config_print(const rt_config *cfg, FILE *out);
/* A copy of a libpq connection string with every password in it replaced by "***", in each
 * form libpq reads: a URI's userinfo (postgresql://user:PASSWORD@host, postgres:// too, the
 * password running to the '@' before the first '/') and its password= query parameter (the key
 * possibly percent-encoded), and the password keyword of a "key = value" string, its value
 * bare or single-quoted, with backslash escapes. malloc'd; NULL only when out of memory. */
char *rt_config_mask_conninfo(const char *conninfo);

#endif
