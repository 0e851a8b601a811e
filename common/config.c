/* SPDX-License-Identifier: MPL-2.0 */
/* config.c - key table, file parser, environment overrides and secret files. */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/core/trust.h"
#include "common/io/file.h"

#define OFF(field)         offsetof(rt_config, field)
#define RT_CONFIG_FILE_MAX (1024 * 1024)
#define RT_SECRET_FILE_MAX 8192

/* Alphabetical. Keep docs/configuration.md's reference in step (scripts/readme-config-table; a test
 * checks). */
const rt_config_key rt_config_keys[] = {
    {"amqp_ca_file", RT_CFG_STRING, OFF(amqp_ca_file), NULL, 0, 0, false,
     "CA bundle used to verify the broker's TLS certificate for amqps:// (default: system CAs)"},
    {"amqp_namespace", RT_CFG_STRING, OFF(amqp_namespace), "retrig", 0, 0, false,
     "name of our work exchange and prefix of our queues (<ns>.retrigger, <ns>.dead-letter, ...)"},
    {"amqp_prefetch", RT_CFG_INT, OFF(amqp_prefetch), "64", 1, 10000, false,
     "unacknowledged messages a consumer may hold (each retrig-classify lane is a consumer)"},
    {"amqp_quorum_queues", RT_CFG_BOOL, OFF(amqp_quorum_queues), "false", 0, 0, false,
     "declare our work queues as quorum queues (replicated; use on a RabbitMQ cluster)"},
    {"amqp_url", RT_CFG_STRING, OFF(amqp_url), "amqp://guest:guest@127.0.0.1:5673/", 0, 0, false,
     "our RabbitMQ broker (amqp:// or amqps://); the nodes of a cluster as"
     " amqp://user:password@host1:port1,host2:port2/ (a lost node's connections move on)"},
    {"budget_limits", RT_CFG_LIST, OFF(budget_limits), "android*=100, *=600", 0, 0, false,
     "daily retrigger budget per platform as PATTERN=LIMIT globs, first match wins"},
    {"budget_minimum", RT_CFG_INT, OFF(budget_minimum), "2", 1, 20, false,
     "fewest retriggers worth requesting; below it the failure is budget-exhausted"},
    {"bugzilla_api_key", RT_CFG_STRING, OFF(bugzilla_api_key), NULL, 0, 0, true,
     "Bugzilla API key for retrig flaky-issues (prefer bugzilla_api_key_file or the environment)"},
    {"bugzilla_api_key_file", RT_CFG_STRING, OFF(bugzilla_api_key_file), NULL, 0, 0, false,
     "file holding the Bugzilla API key"},
    {"bugzilla_components", RT_CFG_LIST, OFF(bugzilla_components), "*=Testing::General", 0, 0,
     false,
     "product and component of a flaky test's bug as TEST-PATH-PREFIX=Product::Component, first"
     " match wins (* matches every test)"},
    {"bugzilla_keywords", RT_CFG_LIST, OFF(bugzilla_keywords), "intermittent-failure", 0, 0, false,
     "keywords of the bugs retrig flaky-issues files"},
    {"bugzilla_url", RT_CFG_STRING, OFF(bugzilla_url), "https://bugzilla.mozilla.org", 0, 0, false,
     "Bugzilla root URL (REST API under /rest)"},
    {"classify_concurrency", RT_CFG_INT, OFF(classify_concurrency), "4", 1, 64, false,
     "messages one retrig-classify process handles at once (lanes, each with its own "
     "connections)"},
    {"culprit_confidence", RT_CFG_DOUBLE, OFF(culprit_confidence), "0.95", 500000, 999000, false,
     "probability with which a culprit search names the right push (0.5 to 0.999); each "
     "probed push is classified with 1 - (1 - c) / ceil(log2(pushes)), which sets its runs"},
    {"culprit_max_depth", RT_CFG_INT, OFF(culprit_max_depth), "20", 1, 99, false,
     "pushes between a culprit search window's first push and the failing push (the pushes "
     "it may bisect) at most"},
    {"culprit_max_jobs", RT_CFG_INT, OFF(culprit_max_jobs), "120", 0, 100000, false,
     "jobs one culprit search may spend on probes, then it stops with the range that holds "
     "the culprit (120: 20 pushes at mozci's 6 runs; under 1 simulated search in 10,000 needs "
     "more)"},
    {"culprit_poll_interval_s", RT_CFG_INT, OFF(culprit_poll_interval_s), "60", 1, 86400, false,
     "how often retrig-decide looks at each culprit search under way (its probes' runs, the next "
     "probe)"},
    {"culprit_probe_deadline_minutes", RT_CFG_INT, OFF(culprit_probe_deadline_minutes), "180", 1,
     100000, false,
     "a culprit search whose probe's runs are not all listed by Treeherder this long after it "
     "asked for them stops (probe-timeout) with the range that still holds the culprit; runs "
     "listed but not finished are waited for 3 times as long (probe-too-slow)"},
    {"culprit_projects", RT_CFG_LIST, OFF(culprit_projects), "autoland", 0, 0, false,
     "Treeherder projects (globs: * and ?) whose regressions get a culprit search by "
     "retrig-decide"},
    {"database_url", RT_CFG_STRING, OFF(database_url),
     "postgresql://retrig:retrig@127.0.0.1:5433/retrig", 0, 0, false,
     "Postgres, as a libpq conninfo string or URI"},
    {"decide_cancel_pending", RT_CFG_BOOL, OFF(decide_cancel_pending), "false", 0, 0, false,
     "cancel the retriggers still pending once a set is decided early (Taskcluster queue, Hawk)"},
    {"decide_confidence", RT_CFG_DOUBLE, OFF(decide_confidence), "0.95", 510000, 999000, false,
     "adaptive policy: posterior probability at which a line is a regression (and 1 minus it, "
     "below which every line must be for an intermittent)"},
    {"decide_delays_ms", RT_CFG_LIST, OFF(decide_delays_ms),
     "1000, 1000, 1000, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 60000, 120000, 300000, "
     "600000",
     0, 0, false,
     "waits before each new look at a set whose runs Treeherder cannot give yet (job not "
     "ingested, logs not parsed, 429/5xx), at most 16; past the last, the set waits for its "
     "other members' results and the deadline sweeper (set_deadline_minutes)"},
    {"decide_max_retriggers", RT_CFG_INT, OFF(decide_max_retriggers), "10", 1, 64, false,
     "adaptive policy: most retriggers for one failure, counting those already there; then the "
     "posterior decides (low-confidence)"},
    {"decide_policy", RT_CFG_STRING, OFF(decide_policy), "seed", 0, 0, false,
     "verdict policy: seed (decide_threshold reproductions), adaptive (a posterior per "
     "failure line from the test's own history and the reproductions) or pooled (one "
     "posterior per failing test per push over every configuration where it ran)"},
    {"decide_pool_deadline_minutes", RT_CFG_INT, OFF(decide_pool_deadline_minutes), "240", 1,
     100000, false,
     "pooled policy: a failing test's pooled set still open this long after it opened decides "
     "with the evidence it has (retriggers that never came count as missing)"},
    {"decide_pool_settle_s", RT_CFG_INT, OFF(decide_pool_settle_s), "1200", 0, 86400, false,
     "pooled policy: seconds a failing test's pooled set waits after its first failure for the "
     "push's other configurations (their failures join it; their runs of the test's group come "
     "from the test history) before it decides or asks for retriggers; it ends earlier when the "
     "push's tasks of the failing tasks' label families have finished"},
    {"decide_prior_regression", RT_CFG_DOUBLE, OFF(decide_prior_regression), "0.15", 1000, 999000,
     false,
     "adaptive policy: share of retriggered failures that are regressions, before any evidence "
     "(an assumption; retrig decisions --estimate-prior estimates it from past decisions)"},
    {"decide_sweep_interval_s", RT_CFG_INT, OFF(decide_sweep_interval_s), "60", 1, 86400, false,
     "how often retrig-decide looks for sets past set_deadline_minutes"},
    {"decide_threshold", RT_CFG_INT, OFF(decide_threshold), "2", 1, 20, false,
     "retriggers that must reproduce a failure line of the original run to call it a regression"},
    {"drain_timeout_ms", RT_CFG_INT, OFF(drain_timeout_ms), "10000", 100, 600000, false,
     "after SIGTERM, how long a worker may go on with the work in hand (an HTTP call still "
     "running then is cut and its message goes back to the queue)"},
    {"dry_run", RT_CFG_BOOL, OFF(dry_run), "false", 0, 0, false,
     "record everything, including the payload that would be sent, but never call Taskcluster"},
    {"errorsummary_max_bytes", RT_CFG_LONG, OFF(errorsummary_max_bytes), "33554432", 1024, 1L << 34,
     false,
     "bytes of all errorsummary artifacts of one run parsed at most; past it the run's summary "
     "is incomplete (infra) and nothing more is parsed"},
    {"flaky_issue_label", RT_CFG_STRING, OFF(flaky_issue_label), "flaky-test", 0, 0, false,
     "label of the GitHub issues retrig flaky-issues opens (and lists to find its own)"},
    {"flaky_issue_on_main", RT_CFG_BOOL, OFF(flaky_issue_on_main), "true", 0, 0, false,
     "a test that failed on the main branch within history_flaky_window_days gets an issue too"},
    {"flaky_issue_quiet_days", RT_CFG_INT, OFF(flaky_issue_quiet_days), "14", 1, 365, false,
     "days without a failure after which retrig flaky-issues closes a flaky test's issue"},
    {"flaky_issue_tracker", RT_CFG_STRING, OFF(flaky_issue_tracker), "github", 0, 0, false,
     "where retrig flaky-issues files issues: github (the project's GitHub Issues) or bugzilla"},
    {"flaky_issues_max_new", RT_CFG_INT, OFF(flaky_issues_max_new), "5", 0, 10000, false,
     "issues retrig flaky-issues opens at most per pass (the flakiest first; the others wait "
     "for the next pass): a flood of new test names cannot flood the tracker"},
    {"flaky_issues_trusted_associations", RT_CFG_LIST, OFF(flaky_issues_trusted_associations),
     "OWNER, MEMBER, COLLABORATOR", 0, 0, false,
     "GitHub author associations whose pull requests from forks count toward opening a flaky-test "
     "issue; other fork pull requests are shown in the issue as evidence, never counted (the "
     "repository's own branches always count)"},
    {"github_api_url", RT_CFG_STRING, OFF(github_api_url), "https://api.github.com", 0, 0, false,
     "GitHub REST API root URL (collect-github, flaky-issues)"},
    {"github_listing_cap", RT_CFG_INT, OFF(github_listing_cap), "1000", 2, 1000, false,
     "runs GitHub serves at most of a listing filtered by creation time (documented: 1,000); "
     "collect-github splits a window reaching it. Lower only against a test double"},
    {"github_rate_limit_reserve", RT_CFG_INT, OFF(github_rate_limit_reserve), "50", 0, 100000,
     false, "GitHub API requests left untouched: collect-github stops (or waits) at this many"},
    {"github_secondary_wait_s", RT_CFG_INT, OFF(github_secondary_wait_s), "60", 1, 3600, false,
     "first wait after a GitHub secondary rate limit without retry-after, doubled on each "
     "further one (GitHub asks for at least 60); lower only against a test double"},
    {"github_token", RT_CFG_STRING, OFF(github_token), NULL, 0, 0, true,
     "GitHub token (actions: read, issues: write); prefer github_token_file or the environment"},
    {"github_token_file", RT_CFG_STRING, OFF(github_token_file), NULL, 0, 0, false,
     "file holding the GitHub token"},
    {"history_batch_size", RT_CFG_INT, OFF(history_batch_size), "50", 1, 1000, false,
     "resolved test runs retrig-history writes in one transaction (multi-row INSERT and COPY);"
     " 1 writes each run on its own"},
    {"history_flaky_min_branches", RT_CFG_INT, OFF(history_flaky_min_branches), "3", 0, 1000, false,
     "a test failing on more than this many branches or pull requests within "
     "history_flaky_window_days is flaky"},
    {"history_flaky_window_days", RT_CFG_INT, OFF(history_flaky_window_days), "7", 1, 365, false,
     "the span within which failures on distinct branches make a test flaky"},
    {"history_main_projects", RT_CFG_LIST, OFF(history_main_projects), "mozilla-central, autoland",
     0, 0, false,
     "Treeherder projects whose runs are branch class main in the test history (others: other)"},
    {"history_projects", RT_CFG_LIST, OFF(history_projects), "*", 0, 0, false,
     "Treeherder projects (globs) whose test runs retrig-history records"},
    {"history_read_url", RT_CFG_STRING, OFF(history_read_url), NULL, 0, 0, false,
     "a read-only Postgres (a replica) for retrig flakes and retrig report, as a libpq conninfo "
     "string or URI; default: database_url"},
    {"history_repository", RT_CFG_STRING, OFF(history_repository), "gecko", 0, 0, false,
     "name under which retrig-history groups every Taskcluster project (retrig flakes --project)"},
    {"history_retention_days", RT_CFG_INT, OFF(history_retention_days), "90", 0, 36500, false,
     "days of test history kept: retrig-history drops each older UTC day as whole partitions "
     "(pg_partman), hourly; 0 keeps everything"},
    {"history_sample_percent", RT_CFG_INT, OFF(history_sample_percent), "100", 0, 100, false,
     "share of test task runs (by task id) whose errorsummary retrig-history fetches and records"},
    {"http_backoff_base_ms", RT_CFG_INT, OFF(http_backoff_base_ms), "250", 1, 600000, false,
     "first retry delay for upstream 429/5xx; doubles each attempt, with jitter"},
    {"http_backoff_max_ms", RT_CFG_INT, OFF(http_backoff_max_ms), "30000", 1, 3600000, false,
     "longest delay between upstream attempts (also caps Retry-After)"},
    {"http_ca_file", RT_CFG_STRING, OFF(http_ca_file), NULL, 0, 0, false,
     "CA bundle used to verify https:// upstreams (default: system CAs)"},
    {"http_connect_timeout_ms", RT_CFG_INT, OFF(http_connect_timeout_ms), "5000", 1, 600000, false,
     "connect timeout for upstream HTTP calls"},
    {"http_max_attempts", RT_CFG_INT, OFF(http_max_attempts), "4", 1, 20, false,
     "attempts per upstream HTTP call before a clear error"},
    {"http_max_body_bytes", RT_CFG_LONG, OFF(http_max_body_bytes), "67108864", 1024, 1L << 34,
     false, "largest upstream response body accepted"},
    {"http_timeout_ms", RT_CFG_INT, OFF(http_timeout_ms), "30000", 1, 3600000, false,
     "total time allowed for one upstream HTTP attempt"},
    {"log_format", RT_CFG_STRING, OFF(log_format), "auto", 0, 0, false,
     "auto (text on a terminal, else JSON lines), json or text"},
    {"log_level", RT_CFG_LEVEL, OFF(log_level), "info", 0, 0, false, "debug, info, warn or error"},
    {"max_message_bytes", RT_CFG_LONG, OFF(max_message_bytes), "1048576", 1024, 64L << 20, false,
     "largest Pulse message body accepted; bigger ones are dead-lettered (too-big)"},
    {"message_time_budget_ms", RT_CFG_INT, OFF(message_time_budget_ms), "30000", 1, 3600000, false,
     "time retrig-classify and retrig-history may spend on one run's errorsummary artifacts; "
     "past it the message is retried later (delay queues), then dead-lettered"},
    {"metrics_bind", RT_CFG_STRING, OFF(metrics_bind), "127.0.0.1", 0, 0, false,
     "address the /metrics and /healthz endpoint listens on (0.0.0.0 or :: for every interface)"},
    {"metrics_port", RT_CFG_INT, OFF(metrics_port), "0", 0, 65535, false,
     "TCP port of the Prometheus /metrics and /healthz endpoint; 0: no endpoint"},
    {"migrations_dir", RT_CFG_STRING, OFF(migrations_dir), RETRIG_DEFAULT_MIGRATIONS_DIR, 0, 0,
     false,
     "folder of numbered SQL migrations applied by 'retrig migrate'; by default the installed "
     "<prefix>/share/retrig/migrations beside the binary's bin/, else the source tree's; the SQL "
     "function files are read from <migrations_dir>/../sql/functions"},
    {"perf_backfill_depth", RT_CFG_INT, OFF(perf_backfill_depth), "9", 1, 25, false,
     "pushes before the alert's push that retrig-perf's backfill runs the job on (input depth)"},
    {"perf_backfill_times", RT_CFG_INT, OFF(perf_backfill_times), "1", 1, 10, false,
     "runs of the job per backfilled push (input times); a backfill costs depth x times jobs"},
    {"perf_budget_limits", RT_CFG_LIST, OFF(perf_budget_limits), "android=100, *=600", 0, 0, false,
     "daily backfill budget in jobs per platform family as FAMILY-PATTERN=LIMIT, first match wins"},
    {"perf_followup_window_hours", RT_CFG_INT, OFF(perf_followup_window_hours), "48", 1, 24 * 30,
     false,
     "hours after a backfill's trigger within which its action task and jobs must settle; later "
     "it is recorded failed (deadline-exceeded)"},
    {"perf_frameworks", RT_CFG_LIST, OFF(perf_frameworks), "1, 4, 13", 0, 0, false,
     "Perfherder framework ids whose alerts are backfilled (talos 1, awsy 4, browsertime 13)"},
    {"perf_include_improvements", RT_CFG_BOOL, OFF(perf_include_improvements), "false", 0, 0, false,
     "backfill improvements too (after every regression); default regressions only"},
    {"perf_interval_s", RT_CFG_INT, OFF(perf_interval_s), "3600", 10, 86400 * 7, false,
     "seconds between two runs of retrig-perf (without --once)"},
    {"perf_lookback_hours", RT_CFG_INT, OFF(perf_lookback_hours), "72", 1, 24 * 90, false,
     "alert summaries created longer ago than this are not read"},
    {"perf_max_per_summary", RT_CFG_INT, OFF(perf_max_per_summary), "3", 1, 100, false,
     "jobs backfilled per alert summary at most (alerts of one job are one backfill)"},
    {"perf_min_age_minutes", RT_CFG_INT, OFF(perf_min_age_minutes), "60", 0, 100000, false,
     "an alert summary younger than this is left for a later run (other alerts may join it)"},
    {"perf_min_amount_pct", RT_CFG_INT, OFF(perf_min_amount_pct), "5", 0, 100000, false,
     "smallest change (amount_pct) worth a backfill"},
    {"perf_platform_families", RT_CFG_LIST, OFF(perf_platform_families),
     "windows10=windows10/windows11, windows7=windows7, linux=linux, osx=macosx/osx, "
     "android=android",
     0, 0, false,
     "platform families in priority order as NAME=PREFIX/PREFIX (machine_platform prefixes); "
     "windows10, windows7, linux, osx and android are required (Perfherder's own backfill "
     "order), others may be added"},
    {"perf_repositories", RT_CFG_LIST, OFF(perf_repositories), "autoland, mozilla-central", 0, 0,
     false, "repositories whose Perfherder alerts retrig-perf backfills"},
    {"pool_prefixes", RT_CFG_LIST, OFF(pool_prefixes), "gecko-t/t-linux-", 0, 0, false,
     "comma-separated task queue id prefixes whose failed tests may be retriggered"},
    {"project_levels", RT_CFG_LIST, OFF(project_levels), "try=1, autoland=3, mozilla-central=3", 0,
     0, false,
     "trust level (1-3, Gecko's) of each Treeherder project as PROJECT=LEVEL: a hook call for "
     "a task of the project must be in-tree-action-<level>-generic/* and its schedulerId "
     "gecko-level-<level>"},
    {"projects", RT_CFG_LIST, OFF(projects), "autoland, mozilla-central", 0, 0, false,
     "Treeherder projects whose failures retrig acts on (exact names, each with a level in "
     "project_levels); runs of others are recorded skip/project"},
    {"pulse_declare_exchanges", RT_CFG_BOOL, OFF(pulse_declare_exchanges), "true", 0, 0, false,
     "declare the Taskcluster exchanges (true on a local broker; false on Mozilla's Pulse)"},
    {"pulse_exchange_prefix", RT_CFG_STRING, OFF(pulse_exchange_prefix),
     "exchange/taskcluster-queue/v1/", 0, 0, false,
     "prefix of the Taskcluster queue exchanges (task-completed, task-failed, task-exception)"},
    {"pulse_password_file", RT_CFG_STRING, OFF(pulse_password_file), NULL, 0, 0, false,
     "file holding the Pulse password; it replaces the password in pulse_url"},
    {"pulse_queue_name", RT_CFG_STRING, OFF(pulse_queue_name), "retrig", 0, 0, false,
     "name of our Pulse queue; the broker queue is queue/<pulse user>/<name>"},
    {"pulse_routing_keys", RT_CFG_LIST, OFF(pulse_routing_keys), "#", 0, 0, false,
     "comma-separated routing-key patterns bound on each task exchange"},
    {"pulse_url", RT_CFG_STRING, OFF(pulse_url), NULL, 0, 0, false,
     "Pulse broker (amqps://user:password@pulse.mozilla.org:5671); default: amqp_url"},
    {"redis_key_prefix", RT_CFG_STRING, OFF(redis_key_prefix), "retrig:", 0, 0, false,
     "prefix of every Redis key retrig writes"},
    {"redis_url", RT_CFG_STRING, OFF(redis_url), "redis://127.0.0.1:6380/0", 0, 0, false,
     "Redis, as redis://host:port/db (no rediss://: TLS through a local proxy, "
     "docs/operations.md)"},
    {"retrigger_action", RT_CFG_STRING, OFF(retrigger_action), "retrigger-multiple", 0, 0, false,
     "the actions.json action used to retrigger (retrigger-multiple, or retrigger)"},
    {"retriggers_per_failure", RT_CFG_INT, OFF(retriggers_per_failure), "5", 1, 20, false,
     "retriggers wanted for a failure, counting ones already present for the push"},
    {"retry_delays_ms", RT_CFG_LIST, OFF(retry_delays_ms), "5000, 30000, 120000, 600000", 0, 0,
     false, "delays before each retry of a message whose upstream call failed; then dead-lettered"},
    {"set_deadline_minutes", RT_CFG_INT, OFF(set_deadline_minutes), "360", 1, 100000, false,
     "a set whose retriggers have not all resolved by then is decided with what is there"},
    {"task_cache_size", RT_CFG_INT, OFF(task_cache_size), "4096", 0, 1000000, false,
     "task definitions kept in memory per worker (they never change)"},
    {"taskcluster_access_token", RT_CFG_STRING, OFF(taskcluster_access_token), NULL, 0, 0, true,
     "Taskcluster access token (prefer taskcluster_access_token_file or the environment)"},
    {"taskcluster_access_token_file", RT_CFG_STRING, OFF(taskcluster_access_token_file), NULL, 0, 0,
     false, "file holding the Taskcluster access token"},
    {"taskcluster_access_token_level1", RT_CFG_STRING, OFF(taskcluster_access_token_level[0]), NULL,
     0, 0, true,
     "Taskcluster access token for hook calls on level-1 projects (with "
     "taskcluster_client_id_level1)"},
    {"taskcluster_access_token_level1_file", RT_CFG_STRING,
     OFF(taskcluster_access_token_level_file[0]), NULL, 0, 0, false,
     "file holding taskcluster_access_token_level1"},
    {"taskcluster_access_token_level2", RT_CFG_STRING, OFF(taskcluster_access_token_level[1]), NULL,
     0, 0, true,
     "Taskcluster access token for hook calls on level-2 projects (with "
     "taskcluster_client_id_level2)"},
    {"taskcluster_access_token_level2_file", RT_CFG_STRING,
     OFF(taskcluster_access_token_level_file[1]), NULL, 0, 0, false,
     "file holding taskcluster_access_token_level2"},
    {"taskcluster_access_token_level3", RT_CFG_STRING, OFF(taskcluster_access_token_level[2]), NULL,
     0, 0, true,
     "Taskcluster access token for hook calls on level-3 projects (with "
     "taskcluster_client_id_level3)"},
    {"taskcluster_access_token_level3_file", RT_CFG_STRING,
     OFF(taskcluster_access_token_level_file[2]), NULL, 0, 0, false,
     "file holding taskcluster_access_token_level3"},
    {"taskcluster_certificate", RT_CFG_STRING, OFF(taskcluster_certificate), NULL, 0, 0, false,
     "certificate JSON of temporary Taskcluster credentials, if any"},
    {"taskcluster_client_id", RT_CFG_STRING, OFF(taskcluster_client_id), NULL, 0, 0, false,
     "Taskcluster client id used for Hawk authentication (for every level without its own "
     "taskcluster_client_id_levelN)"},
    {"taskcluster_client_id_level1", RT_CFG_STRING, OFF(taskcluster_client_id_level[0]), NULL, 0, 0,
     false,
     "Taskcluster client id for hook calls on level-1 projects; default: taskcluster_client_id"},
    {"taskcluster_client_id_level2", RT_CFG_STRING, OFF(taskcluster_client_id_level[1]), NULL, 0, 0,
     false,
     "Taskcluster client id for hook calls on level-2 projects; default: taskcluster_client_id"},
    {"taskcluster_client_id_level3", RT_CFG_STRING, OFF(taskcluster_client_id_level[2]), NULL, 0, 0,
     false,
     "Taskcluster client id for hook calls on level-3 projects; default: taskcluster_client_id"},
    {"taskcluster_hook_group", RT_CFG_STRING, OFF(taskcluster_hook_group), "project-gecko", 0, 0,
     false,
     "the only Taskcluster hook group retrig triggers hooks in (an actions.json naming another "
     "is refused)"},
    {"taskcluster_root_url", RT_CFG_STRING, OFF(taskcluster_root_url),
     "https://firefox-ci-tc.services.mozilla.com", 0, 0, false, "Taskcluster deployment root URL"},
    {"tiers", RT_CFG_LIST, OFF(tiers), "1, 2", 0, 0, false,
     "comma-separated Treeherder tiers whose failed tests may be retriggered (1, 2 or 3)"},
    {"treeherder_url", RT_CFG_STRING, OFF(treeherder_url), "https://treeherder.mozilla.org", 0, 0,
     false, "Treeherder (and Perfherder) root URL"},
    {NULL, 0, 0, NULL, 0, 0, false, NULL},
};

static const rt_config_key *find_key(const char *name, size_t len)
{
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        if (strlen(k->name) == len && !strncmp(k->name, name, len)) return k;
    }
    return NULL;
}

static bool parse_number(const char *value, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0' || v < min || v > max) return false;
    *out = v;
    return true;
}

/* Keys that existed once: a configuration naming one is refused with what became of it. */
static const struct {
    const char *key, *why;
} g_removed[] = {
    {"decide_drop_single_tracking",
     "tracked lines are now compared: a reproduced one is a regression "
     "(reproduced-known-intermittent)"},
};

static bool unknown_key(const char *key, size_t len, const char *origin, char *errstr)
{
    if (find_key(key, len)) return false;
    for (size_t i = 0; i < sizeof g_removed / sizeof g_removed[0]; i++)
        if (strlen(g_removed[i].key) == len && !strncmp(g_removed[i].key, key, len)) {
            rt_set_errstr(errstr, "%s: configuration key '%.*s' was removed (%s); remove it",
                          origin, (int)len, key, g_removed[i].why);
            return true;
        }
    rt_set_errstr(errstr, "%s: unknown configuration key '%.*s'", origin, (int)len, key);
    return true;
}

int rt_config_set(rt_config *cfg, const char *key, const char *value, const char *origin,
                  char *errstr)
{
    if (unknown_key(key, strlen(key), origin, errstr)) return RT_ECONFIG;
    const rt_config_key *k = find_key(key, strlen(key));
    char *field = (char *)cfg + k->offset;
    switch (k->type) {
    case RT_CFG_STRING: {
        if (strlen(value) > 4096) {
            rt_set_errstr(errstr, "%s: value of '%s' is too long", origin, key);
            return RT_ECONFIG;
        }
        char *copy = strdup(value);
        if (!copy) return RT_ENOMEM;
        free(*(char **)field);
        *(char **)field = copy;
        if (k->secret) rt_log_add_secret(copy);
        return RT_OK;
    }
    case RT_CFG_INT:
    case RT_CFG_LONG: {
        long v;
        if (!parse_number(value, k->min, k->max, &v)) {
            rt_set_errstr(errstr, "%s: bad value for '%s': expected an integer from %ld to %ld",
                          origin, key, k->min, k->max);
            return RT_ECONFIG;
        }
        if (k->type == RT_CFG_INT)
            *(int *)field = (int)v;
        else
            *(long *)field = v;
        return RT_OK;
    }
    case RT_CFG_DOUBLE: {
        char *end = NULL;
        errno = 0;
        double v = strtod(value, &end);
        double min = (double)k->min / 1e6, max = (double)k->max / 1e6;
        bool decimal = strspn(value, "0123456789.") == strlen(value); /* no hex, exponent, nan */
        if (!decimal || errno || end == value || *end != '\0' || !(v >= min && v <= max)) {
            rt_set_errstr(errstr, "%s: bad value for '%s': expected a number from %g to %g", origin,
                          key, min, max);
            return RT_ECONFIG;
        }
        *(double *)field = v;
        return RT_OK;
    }
    case RT_CFG_BOOL:
        if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes") ||
            !strcmp(value, "on"))
            *(bool *)field = true;
        else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no") ||
                 !strcmp(value, "off"))
            *(bool *)field = false;
        else {
            rt_set_errstr(errstr, "%s: bad value for '%s': expected true or false", origin, key);
            return RT_ECONFIG;
        }
        return RT_OK;
    case RT_CFG_LEVEL:
        if (rt_log_parse_level(value, (rt_log_level *)field) != RT_OK) {
            rt_set_errstr(errstr, "%s: bad value for '%s': expected debug, info, warn or error",
                          origin, key);
            return RT_ECONFIG;
        }
        return RT_OK;
    case RT_CFG_LIST: {
        rt_config_list *list = (rt_config_list *)field;
        rt_config_list fresh = {0};
        const char *p = value;
        while (*p) {
            while (*p == ' ' || *p == ',') p++;
            if (!*p) break;
            const char *end = p;
            while (*end && *end != ',') end++;
            const char *last = end;
            while (last > p && last[-1] == ' ') last--;
            if (fresh.count == RT_CONFIG_MAX_LIST) {
                for (size_t i = 0; i < fresh.count; i++) free(fresh.items[i]);
                rt_set_errstr(errstr, "%s: bad value for '%s': more than %d items", origin, key,
                              RT_CONFIG_MAX_LIST);
                return RT_ECONFIG;
            }
            fresh.items[fresh.count] = strndup(p, (size_t)(last - p));
            if (!fresh.items[fresh.count]) {
                for (size_t i = 0; i < fresh.count; i++) free(fresh.items[i]);
                return RT_ENOMEM;
            }
            fresh.count++;
            p = end;
        }
        for (size_t i = 0; i < list->count; i++) free(list->items[i]);
        *list = fresh;
        return RT_OK;
    }
    }
    return RT_EINVAL;
}

int rt_config_parse_text(rt_config *cfg, const char *text, size_t len, const char *origin,
                         char *errstr)
{
    size_t lineno = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        lineno++;
        const char *s = p, *e = eol;
        p = eol < end ? eol + 1 : end;
        while (s < e && isspace((unsigned char)*s)) s++;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        if (s == e || *s == '#') continue;
        if (memchr(s, '\0', (size_t)(e - s))) {
            rt_set_errstr(errstr, "%s: line %zu: contains a NUL byte", origin, lineno);
            return RT_ECONFIG;
        }
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (!eq) {
            rt_set_errstr(errstr, "%s: line %zu: expected 'key = value'", origin, lineno);
            return RT_ECONFIG;
        }
        const char *ke = eq;
        while (ke > s && isspace((unsigned char)ke[-1])) ke--;
        const char *vs = eq + 1;
        while (vs < e && isspace((unsigned char)*vs)) vs++;
        const char *ve = e;
        if (vs < ve && *vs == '"') {
            /* A quoted value ends at its closing quote; a comment may follow. */
            const char *close = memchr(vs + 1, '"', (size_t)(ve - vs - 1));
            if (!close) {
                rt_set_errstr(errstr, "%s: line %zu: unterminated quoted value", origin, lineno);
                return RT_ECONFIG;
            }
            const char *rest = close + 1;
            while (rest < ve && isspace((unsigned char)*rest)) rest++;
            if (rest < ve && *rest != '#') {
                rt_set_errstr(errstr, "%s: line %zu: text after the quoted value", origin, lineno);
                return RT_ECONFIG;
            }
            vs++;
            ve = close;
        } else {
            /* " # comment" after an unquoted value (a '#' inside a word is kept). */
            for (const char *c = vs; c < ve; c++) {
                if (*c == '#' && c > vs && isspace((unsigned char)c[-1])) {
                    ve = c;
                    break;
                }
            }
            while (ve > vs && isspace((unsigned char)ve[-1])) ve--;
        }
        if (ke == s || ke - s > 64) {
            rt_set_errstr(errstr, "%s: line %zu: expected 'key = value'", origin, lineno);
            return RT_ECONFIG;
        }
        char key[65];
        memcpy(key, s, (size_t)(ke - s));
        key[ke - s] = '\0';
        char *value = strndup(vs, (size_t)(ve - vs));
        if (!value) return RT_ENOMEM;
        char where[600];
        snprintf(where, sizeof where, "%s: line %zu", origin, lineno);
        int rc = rt_config_set(cfg, key, value, where, errstr);
        free(value);
        if (rc != RT_OK) return rc;
    }
    return RT_OK;
}

/* Reads a whole small file; the caller frees *out. */
static int read_file(const char *path, size_t cap, char **out, size_t *out_len, char *errstr,
                     const char *what)
{
    char why[RT_ERRSTR_SIZE] = "";
    int rc = rt_file_read(path, cap, out, out_len, why);
    if (rc == RT_ENOMEM) return rc;
    if (rc != RT_OK) {
        rt_set_errstr(errstr, "%s '%s' cannot be read: %s", what, path, why);
        return RT_ECONFIG;
    }
    return RT_OK;
}

static int read_secret_file(const char *path, const char *key, char **out, char *errstr)
{
    char *buf = NULL;
    size_t len = 0;
    char what[96];
    snprintf(what, sizeof what, "secret file of '%s'", key);
    int rc = read_file(path, RT_SECRET_FILE_MAX, &buf, &len, errstr, what);
    if (rc != RT_OK) return rc;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    if (len == 0 || strlen(buf) != len) {
        free(buf);
        rt_set_errstr(errstr, "%s '%s' is empty or not text", what, path);
        return RT_ECONFIG;
    }
    rt_log_add_secret(buf);
    *out = buf;
    return RT_OK;
}

/* Puts password into url's userinfo (scheme://user:password@host...). */
static int url_with_password(const char *url, const char *password, char **out, char *errstr)
{
    const char *scheme_end = strstr(url, "://");
    const char *host_start = scheme_end ? scheme_end + 3 : NULL;
    const char *at = host_start ? strchr(host_start, '@') : NULL;
    const char *slash = host_start ? strchr(host_start, '/') : NULL;
    if (!at || (slash && slash < at)) {
        rt_set_errstr(errstr, "pulse_url must name a user (scheme://user@host) when "
                              "pulse_password_file is set");
        return RT_ECONFIG;
    }
    const char *colon = memchr(host_start, ':', (size_t)(at - host_start));
    const char *user_end = colon ? colon : at;
    size_t size = strlen(url) + strlen(password) + 2;
    char *s = malloc(size);
    if (!s) return RT_ENOMEM;
    snprintf(s, size, "%.*s:%s%s", (int)(user_end - url), url, password, at);
    *out = s;
    return RT_OK;
}

static int apply_environment(rt_config *cfg, char *errstr)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "RETRIG_", 7) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        const char *name = *e + 7;
        size_t len = (size_t)(eq - name);
        if (len == 6 && !strncmp(name, "CONFIG", 6)) continue;
        char key[80];
        if (len >= sizeof key) len = sizeof key - 1;
        for (size_t i = 0; i < len; i++) key[i] = (char)tolower((unsigned char)name[i]);
        key[len] = '\0';
        char origin[128];
        snprintf(origin, sizeof origin, "environment variable RETRIG_%.*s", (int)len, name);
        if (unknown_key(key, len, origin, errstr)) return RT_ECONFIG;
        int rc = rt_config_set(cfg, key, eq + 1, origin, errstr);
        if (rc != RT_OK) return rc;
    }
    return RT_OK;
}

/* The migrations of an installed retrig (`cmake --install`): <prefix>/share/retrig/migrations,
 * found from the running binary's <prefix>/bin. Writes "" when there is none, as in a build
 * tree (build/bin/../share does not exist), where the compiled-in source path stays. */
static void installed_migrations_dir(char *out, size_t size)
{
    char exe[PATH_MAX];
    out[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    char dir[PATH_MAX + 32], real[PATH_MAX];
    struct stat st;
    int len = snprintf(dir, sizeof dir, "%s/../share/retrig/migrations", exe);
    if (len < 0 || (size_t)len >= sizeof dir) return;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(dir, real)) return;
    if (strlen(real) < size) memcpy(out, real, strlen(real) + 1);
}

int rt_config_defaults(rt_config *cfg, char *errstr)
{
    memset(cfg, 0, sizeof *cfg);
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        if (!k->default_value) continue;
        int rc = rt_config_set(cfg, k->name, k->default_value, "built-in default", errstr);
        if (rc != RT_OK) return rc;
    }
    char installed[PATH_MAX];
    installed_migrations_dir(installed, sizeof installed);
    if (installed[0])
        return rt_config_set(cfg, "migrations_dir", installed, "built-in default", errstr);
    return RT_OK;
}

/* Runs after the file and the environment are applied: reads the secret files into their keys,
 * checks what the key table cannot check alone and applies the log settings. Long because it is
 * one block per secret file, then one check per key (or pair of keys) that needs more than its
 * type, each with its own message. */
static int finish(rt_config *cfg, char *errstr)
{
    int rc;
    char level_error[RT_ERRSTR_SIZE];
    if (cfg->taskcluster_access_token_file) {
        char *token = NULL;
        rc = read_secret_file(cfg->taskcluster_access_token_file, "taskcluster_access_token_file",
                              &token, errstr);
        if (rc != RT_OK) return rc;
        free(cfg->taskcluster_access_token);
        cfg->taskcluster_access_token = token;
    }
    if (cfg->github_token_file) {
        char *token = NULL;
        rc = read_secret_file(cfg->github_token_file, "github_token_file", &token, errstr);
        if (rc != RT_OK) return rc;
        free(cfg->github_token);
        cfg->github_token = token;
    }
    if (cfg->bugzilla_api_key_file) {
        char *key = NULL;
        rc = read_secret_file(cfg->bugzilla_api_key_file, "bugzilla_api_key_file", &key, errstr);
        if (rc != RT_OK) return rc;
        free(cfg->bugzilla_api_key);
        cfg->bugzilla_api_key = key;
    }
    for (int i = 0; i < RT_CONFIG_LEVELS; i++) {
        if (!cfg->taskcluster_access_token_level_file[i]) continue;
        char *token = NULL, key[64];
        snprintf(key, sizeof key, "taskcluster_access_token_level%d_file", i + 1);
        rc = read_secret_file(cfg->taskcluster_access_token_level_file[i], key, &token, errstr);
        if (rc != RT_OK) return rc;
        free(cfg->taskcluster_access_token_level[i]);
        cfg->taskcluster_access_token_level[i] = token;
    }
    for (int i = 0; i < RT_CONFIG_LEVELS; i++) {
        if (!cfg->taskcluster_client_id_level[i] != !cfg->taskcluster_access_token_level[i]) {
            rt_set_errstr(errstr,
                          "bad value for 'taskcluster_client_id_level%d': it goes with "
                          "taskcluster_access_token_level%d (or its _file), both or neither",
                          i + 1, i + 1);
            return RT_ECONFIG;
        }
    }
    if (rt_trust_levels_check(&cfg->project_levels, level_error) != RT_OK) {
        rt_set_errstr(errstr, "bad value for 'project_levels': %s", level_error);
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < cfg->projects.count; i++) {
        if (!rt_trust_project_level(&cfg->project_levels, cfg->projects.items[i])) {
            rt_set_errstr(errstr,
                          "bad value for 'projects': '%s' has no trust level in project_levels",
                          cfg->projects.items[i]);
            return RT_ECONFIG;
        }
    }
    if (!cfg->taskcluster_hook_group || !*cfg->taskcluster_hook_group ||
        strpbrk(cfg->taskcluster_hook_group, "/ %")) {
        rt_set_errstr(errstr, "bad value for 'taskcluster_hook_group': a hook group name");
        return RT_ECONFIG;
    }
    if (!cfg->pulse_url) {
        cfg->pulse_url = strdup(cfg->amqp_url);
        if (!cfg->pulse_url) return RT_ENOMEM;
    }
    if (cfg->pulse_password_file) {
        char *password = NULL, *url = NULL;
        rc = read_secret_file(cfg->pulse_password_file, "pulse_password_file", &password, errstr);
        if (rc != RT_OK) return rc;
        rc = url_with_password(cfg->pulse_url, password, &url, errstr);
        free(password);
        if (rc != RT_OK) return rc;
        free(cfg->pulse_url);
        cfg->pulse_url = url;
    }
    const struct {
        const char *key;
        const char *value;
        const char *const *schemes;
    } urls[] = {
        {"amqp_url", cfg->amqp_url, (const char *const[]){"amqp://", "amqps://", NULL}},
        {"pulse_url", cfg->pulse_url, (const char *const[]){"amqp://", "amqps://", NULL}},
        {"redis_url", cfg->redis_url, (const char *const[]){"redis://", NULL}},
        {"taskcluster_root_url", cfg->taskcluster_root_url,
         (const char *const[]){"http://", "https://", NULL}},
        {"treeherder_url", cfg->treeherder_url, (const char *const[]){"http://", "https://", NULL}},
    };
    if (cfg->redis_url && !strncmp(cfg->redis_url, "rediss://", 9)) {
        rt_set_errstr(errstr, "bad value for 'redis_url': rediss:// (TLS) is not supported: "
                              "Debian 12's hiredis 0.14 has no TLS; reach a TLS Redis through "
                              "a local TLS proxy (docs/operations.md, \"Redis over TLS\")");
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        bool ok = false;
        for (const char *const *s = urls[i].schemes; *s; s++)
            if (urls[i].value && !strncmp(urls[i].value, *s, strlen(*s))) ok = true;
        if (!ok) {
            rt_set_errstr(errstr, "bad value for '%s': expected a URL starting with %s%s%s",
                          urls[i].key, urls[i].schemes[0], urls[i].schemes[1] ? " or " : "",
                          urls[i].schemes[1] ? urls[i].schemes[1] : "");
            return RT_ECONFIG;
        }
    }
    /* URL passwords are secrets too, wherever they end up. */
    for (size_t i = 0; i < 3; i++) {
        const char *h = strstr(urls[i].value, "://") + 3;
        const char *at = strchr(h, '@');
        const char *colon = at ? memchr(h, ':', (size_t)(at - h)) : NULL;
        if (colon && at - colon - 1 >= 4) {
            char *pw = strndup(colon + 1, (size_t)(at - colon - 1));
            if (pw && strcmp(pw, "guest") != 0) rt_log_add_secret(pw);
            free(pw);
        }
    }
    if (cfg->retry_delays_ms.count == 0) {
        rt_set_errstr(errstr, "bad value for 'retry_delays_ms': at least one delay is needed");
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < cfg->retry_delays_ms.count; i++) {
        char *end = NULL;
        long v = strtol(cfg->retry_delays_ms.items[i], &end, 10);
        if (end == cfg->retry_delays_ms.items[i] || *end || v < 100 || v > 86400000) {
            rt_set_errstr(errstr,
                          "bad value for 'retry_delays_ms': '%s' is not a delay from 100 "
                          "to 86400000 ms",
                          cfg->retry_delays_ms.items[i]);
            return RT_ECONFIG;
        }
    }
    for (size_t i = 0; i < cfg->budget_limits.count; i++) {
        const char *item = cfg->budget_limits.items[i];
        const char *eq = strrchr(item, '=');
        char *end = NULL;
        long v = eq ? strtol(eq + 1, &end, 10) : -1;
        if (!eq || eq == item || end == eq + 1 || *end || v < 0 || v > 1000000) {
            rt_set_errstr(errstr, "bad value for 'budget_limits': '%s' is not PATTERN=LIMIT", item);
            return RT_ECONFIG;
        }
    }
    if (strlen(cfg->redis_key_prefix) > 64 || strpbrk(cfg->redis_key_prefix, " \r\n")) {
        rt_set_errstr(errstr, "bad value for 'redis_key_prefix': at most 64 characters, no spaces");
        return RT_ECONFIG;
    }
    if (strlen(cfg->pulse_queue_name) == 0 || strlen(cfg->pulse_queue_name) > 100 ||
        strpbrk(cfg->pulse_queue_name, "/ \r\n")) {
        rt_set_errstr(errstr, "bad value for 'pulse_queue_name': 1-100 characters without '/'");
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < cfg->tiers.count; i++) {
        const char *t = cfg->tiers.items[i];
        if (strlen(t) != 1 || t[0] < '1' || t[0] > '3') {
            rt_set_errstr(errstr, "bad value for 'tiers': '%s' is not a tier (1, 2 or 3)", t);
            return RT_ECONFIG;
        }
    }
    if (strcmp(cfg->decide_policy, "seed") != 0 && strcmp(cfg->decide_policy, "adaptive") != 0 &&
        strcmp(cfg->decide_policy, "pooled") != 0) {
        rt_set_errstr(errstr, "bad value for 'decide_policy': expected seed, adaptive or pooled");
        return RT_ECONFIG;
    }
    if (strcmp(cfg->flaky_issue_tracker, "github") != 0 &&
        strcmp(cfg->flaky_issue_tracker, "bugzilla") != 0) {
        rt_set_errstr(errstr, "bad value for 'flaky_issue_tracker': expected github or bugzilla");
        return RT_ECONFIG;
    }
    for (size_t i = 0; i < cfg->flaky_issues_trusted_associations.count; i++) {
        const char *a = cfg->flaky_issues_trusted_associations.items[i];
        if (!*a || strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(a)) {
            rt_set_errstr(errstr,
                          "bad value for 'flaky_issues_trusted_associations': '%s' is not a "
                          "GitHub author association (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, "
                          "...)",
                          a);
            return RT_ECONFIG;
        }
    }
    for (size_t i = 0; i < cfg->bugzilla_components.count; i++) {
        const char *m = cfg->bugzilla_components.items[i], *eq = strchr(m, '='),
                   *sep = eq ? strstr(eq, "::") : NULL;
        if (!eq || eq == m || !sep || sep == eq + 1 || !sep[2]) {
            rt_set_errstr(errstr,
                          "bad value for 'bugzilla_components': '%s' is not "
                          "PREFIX=Product::Component",
                          m);
            return RT_ECONFIG;
        }
    }
    if (cfg->http_backoff_base_ms > cfg->http_backoff_max_ms) {
        rt_set_errstr(errstr,
                      "bad value for 'http_backoff_base_ms': larger than http_backoff_max_ms");
        return RT_ECONFIG;
    }
    rt_log_format format;
    if (rt_log_parse_format(cfg->log_format, &format) != RT_OK) {
        rt_set_errstr(errstr, "bad value for 'log_format': '%s' is not auto, json or text",
                      cfg->log_format);
        return RT_ECONFIG;
    }
    rt_log_set_level(cfg->log_level);
    rt_log_set_format(format);
    return RT_OK;
}

int rt_config_load(rt_config *cfg, const char *path, char *errstr)
{
    int rc = rt_config_defaults(cfg, errstr);
    if (rc != RT_OK) return rc;
    if (!path) path = getenv("RETRIG_CONFIG");
    if (path && *path) {
        char *text = NULL;
        size_t len = 0;
        rc = read_file(path, RT_CONFIG_FILE_MAX, &text, &len, errstr,
                       "configuration file (RETRIG_CONFIG)");
        if (rc != RT_OK) return rc;
        char origin[560];
        snprintf(origin, sizeof origin, "configuration file '%s'", path);
        rc = rt_config_parse_text(cfg, text, len, origin, errstr);
        free(text);
        if (rc != RT_OK) return rc;
        snprintf(cfg->source, sizeof cfg->source, "%s", path);
    }
    rc = apply_environment(cfg, errstr);
    if (rc != RT_OK) return rc;
    return finish(cfg, errstr);
}

void rt_config_free(rt_config *cfg)
{
    if (!cfg) return;
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        char *field = (char *)cfg + k->offset;
        if (k->type == RT_CFG_STRING) {
            free(*(char **)field);
            *(char **)field = NULL;
        } else if (k->type == RT_CFG_LIST) {
            rt_config_list *list = (rt_config_list *)field;
            for (size_t i = 0; i < list->count; i++) free(list->items[i]);
            list->count = 0;
        }
    }
}

int rt_config_copy(rt_config *cfg, const rt_config *from)
{
    *cfg = *from;
    bool ok = true;
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        char *field = (char *)cfg + k->offset;
        if (k->type == RT_CFG_STRING) {
            char **v = (char **)field;
            if (*v && !(*v = ok ? strdup(*v) : NULL)) ok = false;
        } else if (k->type == RT_CFG_LIST) {
            rt_config_list *list = (rt_config_list *)field;
            for (size_t i = 0; i < list->count; i++)
                if (!(list->items[i] = ok ? strdup(list->items[i]) : NULL)) ok = false;
        }
    }
    if (ok) return RT_OK;
    rt_config_free(cfg); /* frees the copies made; the rest are NULL */
    return RT_ENOMEM;
}

/* Appends text[from, to) to out at *n (out is sized for the whole text plus the masks). */
static void append_span(char *out, size_t *n, const char *from, const char *to)
{
    memcpy(out + *n, from, (size_t)(to - from));
    *n += (size_t)(to - from);
}

static void append_mask(char *out, size_t *n)
{
    memcpy(out + *n, "***", 3);
    *n += 3;
}

/* Whether the URI query key [k, end) is "password", percent-decoded as libpq decodes it. */
static bool uri_key_is_password(const char *k, const char *end)
{
    static const char want[] = "password";
    size_t i = 0;
    while (k < end) {
        int c = (unsigned char)*k++;
        if (c == '%' && end - k >= 2 && isxdigit((unsigned char)k[0]) &&
            isxdigit((unsigned char)k[1])) {
            char hex[3] = {k[0], k[1], '\0'};
            c = (int)strtol(hex, NULL, 16);
            k += 2;
        }
        if (i >= sizeof want - 1 || c != want[i++]) return false;
    }
    return i == sizeof want - 1;
}

/* libpq's URI form (fe-connect.c, conninfo_uri_parse_options): postgresql://[user[:password]@]
 * host...[?key=value&...]. The userinfo is what precedes an '@' met before any '/'. */
static void mask_uri(const char *s, size_t prefix, char *out, size_t *n)
{
    const char *start = s + prefix, *p = start;
    while (*p && *p != '@' && *p != '/') p++;
    const char *rest = start;
    append_span(out, n, s, start);
    if (*p == '@') {
        const char *colon = memchr(start, ':', (size_t)(p - start));
        if (colon) {
            append_span(out, n, start, colon + 1);
            append_mask(out, n);
        } else {
            append_span(out, n, start, p);
        }
        rest = p; /* the '@' on */
    }
    const char *query = strchr(rest, '?');
    if (!query) {
        append_span(out, n, rest, rest + strlen(rest));
        return;
    }
    append_span(out, n, rest, query + 1);
    for (const char *q = query + 1; *q;) {
        const char *end = q + strcspn(q, "&"), *eq = memchr(q, '=', (size_t)(end - q));
        if (eq && uri_key_is_password(q, eq)) {
            append_span(out, n, q, eq + 1);
            append_mask(out, n);
        } else {
            append_span(out, n, q, end);
        }
        if (*end == '&') append_span(out, n, end, end + 1);
        q = *end ? end + 1 : end;
    }
}

/* libpq's "key = value" form (fe-connect.c, conninfo_parse): a value is bare (to the next
 * space) or single-quoted, a backslash escaping the next character in both. Text it cannot
 * parse is copied as it is, from where parsing stopped: libpq refuses such a string. */
static void mask_keywords(const char *s, char *out, size_t *n)
{
    const char *p = s;
    while (*p) {
        const char *k = p;
        while (*p && isspace((unsigned char)*p)) p++;
        const char *key = p;
        while (*p && *p != '=' && !isspace((unsigned char)*p)) p++;
        const char *key_end = p;
        while (*p && isspace((unsigned char)*p)) p++;
        if (*p != '=') {
            append_span(out, n, k, p + strlen(p));
            return;
        }
        p++;
        while (*p && isspace((unsigned char)*p)) p++;
        const char *value = p;
        if (*p == '\'') {
            for (p++; *p && *p != '\''; p++)
                if (*p == '\\' && p[1]) p++;
            if (*p) p++;
        } else {
            for (; *p && !isspace((unsigned char)*p); p++)
                if (*p == '\\' && p[1]) p++;
        }
        append_span(out, n, k, value);
        if (key_end - key == 8 && !strncmp(key, "password", 8))
            append_mask(out, n);
        else
            append_span(out, n, value, p);
    }
}

char *rt_config_mask_conninfo(const char *conninfo)
{
    const char *s = conninfo ? conninfo : "";
    /* Each password becomes "***": at most 3 bytes more per byte of the string (an empty
     * value masked), and the NUL. */
    char *out = malloc(4 * strlen(s) + 4);
    if (!out) return NULL;
    size_t n = 0;
    if (!strncmp(s, "postgresql://", 13))
        mask_uri(s, 13, out, &n);
    else if (!strncmp(s, "postgres://", 11))
        mask_uri(s, 11, out, &n);
    else
        mask_keywords(s, out, &n);
    out[n] = '\0';
    return out;
}

void rt_config_print(const rt_config *cfg, FILE *out)
{
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        const char *field = (const char *)cfg + k->offset;
        char line[8192];
        switch (k->type) {
        case RT_CFG_STRING: {
            const char *v = *(char *const *)field;
            char *masked =
                v && !strcmp(k->name, "database_url") ? rt_config_mask_conninfo(v) : NULL;
            if (masked) v = masked;
            snprintf(line, sizeof line, "%s = %s", k->name, !v ? "" : k->secret ? "***" : v);
            free(masked);
            break;
        }
        case RT_CFG_INT:
            snprintf(line, sizeof line, "%s = %d", k->name, *(const int *)field);
            break;
        case RT_CFG_LONG:
            snprintf(line, sizeof line, "%s = %ld", k->name, *(const long *)field);
            break;
        case RT_CFG_DOUBLE:
            snprintf(line, sizeof line, "%s = %g", k->name, *(const double *)field);
            break;
        case RT_CFG_BOOL:
            snprintf(line, sizeof line, "%s = %s", k->name,
                     *(const bool *)field ? "true" : "false");
            break;
        case RT_CFG_LEVEL:
            snprintf(line, sizeof line, "%s = %s", k->name,
                     levels[*(const rt_log_level *)field & 3]);
            break;
        case RT_CFG_LIST: {
            const rt_config_list *list = (const rt_config_list *)field;
            size_t n = (size_t)snprintf(line, sizeof line, "%s = ", k->name);
            for (size_t i = 0; i < list->count && n < sizeof line; i++)
                n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", i ? ", " : "",
                                      list->items[i]);
            break;
        }
        }
        char clean[8192 * 3 + 4];
        rt_redact(line, clean, sizeof clean);
        fprintf(out, "%s\n", clean);
    }
}
