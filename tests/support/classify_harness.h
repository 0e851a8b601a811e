/* SPDX-License-Identifier: MPL-2.0 */
/* classify_harness.h - runs real retrig-classify processes against the local RabbitMQ,
 * Redis and Postgres and the fake upstream, for integration tests and the benchmark.
 *
 * Each harness has names of its own (database, Redis key prefix, AMQP namespace, Pulse
 * exchange prefix and queue name), so harnesses in parallel test binaries never meet. It
 * creates and migrates its database, starts the fake upstream, starts N workers with the
 * matching RETRIG_* environment (their stderr goes to a log file each), publishes Pulse
 * messages with confirms and CC routes, polls Postgres with bounded timeouts, drains our
 * queues, and at the end stops the workers with SIGTERM and deletes everything it made.
 * Workers die with the test process (PR_SET_PDEATHSIG). Failures inside the harness fail
 * the current cmocka test. Not thread-safe: one harness per thread. */
#ifndef RETRIG_TESTS_SUPPORT_CLASSIFY_HARNESS_H
#define RETRIG_TESTS_SUPPORT_CLASSIFY_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/io/amqp.h"
#include "common/io/pg.h"
#include "common/io/redis.h"
#include "support/fake_upstream.h"

#define RT_CH_MAX_WORKERS 12
#define RT_CH_MAX_ENV     32

/* The worker pools of the recorded fixtures' tasks. */
#define RT_CH_FIXTURE_POOLS "terraform-packet/gecko-t-linux, releng-hardware/gecko-t-osx-1014"

typedef struct rt_ch {
    char id[64];               /* unique base name */
    char dir[128];             /* temporary folder: worker logs */
    char dbname[64];           /* the harness's own database */
    char database_url[512];    /* database_url pointing at it */
    char redis_prefix[96];     /* "<id>:" */
    char ns[96];               /* amqp_namespace */
    char exchange_prefix[128]; /* pulse_exchange_prefix "<id>/exchange/taskcluster-queue/v1/" */
    char queue_name[96];       /* pulse_queue_name */
    char pulse_queue[160];     /* "queue/guest/<queue_name>" */
    char retry_delays[64];     /* RETRIG_RETRY_DELAYS_MS the workers get */
    rt_config cfg;             /* defaults + environment: the service URLs */
    rt_fake fake;
    rt_pg *pg;         /* connected to the harness database */
    rt_redis *redis;   /* the shared Redis (keys under redis_prefix only) */
    rt_amqp *amqp;     /* publishes and drains */
    bool consuming[4]; /* queues the amqp handle consumes: retrigger, dead-letter, decide */
    pid_t workers[RT_CH_MAX_WORKERS];
    char programs[RT_CH_MAX_WORKERS][32]; /* what each worker runs: "retrig-classify" */
    char ready[RT_CH_MAX_WORKERS][32];    /* the log message it gives once ready: "consuming" */
    size_t nworkers;
    char *env[RT_CH_MAX_ENV]; /* "RETRIG_KEY=value" for workers started from now on */
    size_t nenv;
} rt_ch;

/* A message read from one of our queues. */
typedef struct rt_ch_message {
    char *body;
    char *message_id;
    char *reason; /* x-retrig-reason header, NULL when absent */
} rt_ch_message;

/* Names, database (created and migrated), fake upstream (no scenario), connections, and
 * the worker environment defaults: the fixture pools, retry delays 300,600 ms, one HTTP
 * attempt, log level info. Returns a malloc'd harness; fails the test on error. */
rt_ch *rt_ch_new(void);
/* Stops workers still running (SIGKILL if SIGTERM is not enough), deletes the queues,
 * exchanges and Redis keys, drops the database, stops the fake. NULL: no-op. */
void rt_ch_free(rt_ch *h);

/* Sets RETRIG_<KEY>=value for workers started from now on (key in upper case, without
 * the RETRIG_ prefix: "TIERS"). */
void rt_ch_setenv(rt_ch *h, const char *key, const char *value);
/* Starts n more retrig-classify workers and waits (at most 20 s) until each one consumes. */
void rt_ch_start_workers(rt_ch *h, size_t n);
/* The same for another worker program of RT_TEST_BIN_DIR ("retrig-retrigger"); it gets
 * the same environment and must log "consuming" once ready. */
void rt_ch_start_program(rt_ch *h, const char *program, size_t n);
/* The same for a program that logs another message once ready ("running" for retrig-perf
 * without --once); a restart or respawn of its workers waits for that message too. */
void rt_ch_start_program_ready(rt_ch *h, const char *program, size_t n, const char *ready);
/* Starts one `program` worker without waiting for it (it may be waiting for its services);
 * returns its index. */
size_t rt_ch_spawn_program(rt_ch *h, const char *program);
/* Whether worker `index`'s log has a line with the JSON string "<message>". */
bool rt_ch_log_says(const rt_ch *h, size_t index, const char *message);
/* Sends sig (SIGKILL) to worker `index`, reaps it, and starts the same program in its
 * place (new pid, environment as set now), waiting until it consumes. */
void rt_ch_restart_worker(rt_ch *h, size_t index, int sig);
/* Reaps every worker that exited on its own (crash, fatal error) and starts the same
 * program in its place, waiting until it consumes. Returns how many were restarted. */
size_t rt_ch_respawn_exited(rt_ch *h);
/* The pid of a worker. */
pid_t rt_ch_worker_pid(const rt_ch *h, size_t index);
/* SIGTERM to every worker, then waits at most timeout_ms for all of them. Returns how
 * many did not exit with status 0 (still running, killed by a signal, non-zero). */
int rt_ch_stop_workers(rt_ch *h, int timeout_ms);
/* Until `queue` (a full queue name) is empty with no worker running: waits for the
 * workers to drain it, stops them (each must exit 0, else the test fails), and when
 * messages went back to the queue starts `workers` fresh `program` workers and goes on.
 * Afterwards every message published to it was handled and settled. */
void rt_ch_settle(rt_ch *h, const char *program, const char *queue, size_t workers, int timeout_ms);
/* Declares the Pulse exchanges, the Pulse queue and its "#" bindings as the workers do,
 * so messages can be published before any worker runs. */
void rt_ch_declare_pulse(rt_ch *h);

/* Merges a scenario (JSON text or object) into the fake upstream. */
void rt_ch_scenario(rt_ch *h, json_t *scenario);

/* Publishes body to <exchange_prefix><event> ("task-failed") with a confirm, routing key
 * the primary key built from the body (or "primary" when it does not parse), the CC
 * header "route.<route>" when route is not NULL, and message_id when not NULL. */
void rt_ch_publish(rt_ch *h, const char *event, const char *body, size_t len, const char *route,
                   const char *message_id);

/* The test history of the first line of a bug_suggestions fixture's test, on other pushes
 * of autoland in the hours before now (one run every 5 minutes): `runs` runs, of which the
 * first `failures` failed with the line's signature. */
void rt_ch_line_history(rt_ch *h, const char *bugsug_fixture, int runs, int failures);

/* Runs a query whose first column of the first row is an integer (NULL counts as 0). */
long long rt_ch_sql_int(rt_ch *h, const char *sql, int nparams, const char *const *params);
/* Runs a query and returns the first column of the first row, malloc'd; NULL when there
 * is no row or the value is NULL. */
char *rt_ch_sql_text(rt_ch *h, const char *sql, int nparams, const char *const *params);
/* Polls rt_ch_sql_int every 20 ms until it equals want or timeout_ms passes; returns the
 * last value seen. */
long long rt_ch_wait_int(rt_ch *h, int timeout_ms, long long want, const char *sql, int nparams,
                         const char *const *params);
/* "verdict/verdict_reason" of a run (static buffer), "" when not classified (or absent). */
const char *rt_ch_verdict(rt_ch *h, const char *task_id, int run_id);
/* Waits until the run has a verdict (at most timeout_ms) and returns it as rt_ch_verdict. */
const char *rt_ch_wait_verdict(rt_ch *h, const char *task_id, int run_id, int timeout_ms);

/* Messages ready in <ns>.<suffix> ("retrigger", "decide", "dead-letter"); fails when it
 * is missing. */
unsigned rt_ch_queue_depth(rt_ch *h, const char *suffix);
/* Polls rt_ch_queue_depth until it equals want or timeout_ms passes; returns the last value
 * (a message is published after the row that tells of it commits). */
unsigned rt_ch_wait_queue_depth(rt_ch *h, const char *suffix, unsigned want, int timeout_ms);
/* Takes exactly `count` messages from <ns>.<suffix> (waiting at most timeout_ms for them)
 * and acks them; *out receives a malloc'd array. Fails the test when fewer arrive. */
void rt_ch_take(rt_ch *h, const char *suffix, size_t count, int timeout_ms, rt_ch_message **out);
void rt_ch_messages_free(rt_ch_message *messages, size_t count);

/* The Redis budget counter <prefix>budget:<platform>:<today UTC>; -1 when absent. */
int rt_ch_budget_counter(rt_ch *h, const char *platform);
/* Deletes every Redis key under the harness prefix (a FLUSHALL of our own keys only). */
void rt_ch_flush_redis(rt_ch *h);
/* Today's UTC date "YYYY-MM-DD" (static buffer). */
const char *rt_ch_today(void);

/* ---- test data from the recorded fixtures ---- */

/* A random valid Taskcluster slugid (22 characters + NUL). */
void rt_ch_slugid(char out[23]);
/* The failed variant (rt_test_failed_variant, raw body) of a pulse fixture with its
 * status.taskId and status.taskGroupId replaced (NULL keeps the recorded value). */
char *rt_ch_failed_message(const char *pulse_fixture, const char *task_id,
                           const char *task_group_id);
/* Registers n eligible failures with the fake upstream: each a new task id and task group
 * (written to task_ids[i], groups[i]) with the recorded GWxTc8p definition, its label
 * "<recorded label>-<tag>-<i>", and the recorded failing mochitest errorsummary. */
void rt_ch_eligible_scenario(rt_ch *h, int n, const char *tag, char (*task_ids)[23],
                             char (*groups)[23]);
/* A recorded task definition (taskcluster/task_definition_<name>.json) with taskGroupId
 * and tags.label replaced (NULL keeps the recorded value). */
json_t *rt_ch_task_definition(const char *fixture, const char *task_group_id, const char *label);
/* The recorded actions.json (of push RT_CH_ACTIONS_DECISION, revision RT_CH_ACTIONS_REVISION)
 * as the artifact of another push: an artifact entry for a scenario whose content has the
 * decision task group and the revision replaced (NULL keeps the recorded one), so that the
 * hook calls it renders are the push's own (common/core/trust.h). */
#define RT_CH_ACTIONS_DECISION "f7Jj_h6MTEKr5Ln_7aFqbw"
#define RT_CH_ACTIONS_REVISION "c7766d0b4a121985a8b07e6721d66ccab57bbf76"
json_t *rt_ch_actions_artifact(const char *decision_task_id, const char *revision);
/* Validates a JSON document against a schema file with Debian's python3-jsonschema (with
 * format checks). Returns 0 when valid, else non-zero with the error in `error`
 * (malloc'd, may be NULL). */
int rt_ch_validate_schema(const char *schema_path, const char *json_text, char **error);

#endif
