/* SPDX-License-Identifier: MPL-2.0 */
/* classify_harness.c - retrig-classify processes against real services, for tests. */
#include "support/classify_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/core/bugsug.h"
#include "common/io/migrate.h"
#include "common/options.h"
#include "support/fixtures.h"
#include "support/util.h"

extern char **environ;

static const char *const PULSE_EVENTS[] = {"task-completed", "task-failed", "task-exception"};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* database_url with its database replaced by dbname (URI or conninfo form). */
static void url_with_database(char *out, size_t size, const char *url, const char *dbname)
{
    const char *scheme = strstr(url, "://");
    if (!scheme) {
        snprintf(out, size, "%s dbname=%s", url, dbname);
        return;
    }
    const char *path = strchr(scheme + 3, '/');
    const char *query = strchr(scheme + 3, '?');
    if (!path || (query && query < path)) path = query ? query : url + strlen(url);
    snprintf(out, size, "%.*s/%s%s", (int)(path - url), url, dbname, query ? query : "");
}

static void exec_ddl(rt_pg *pg, const char *verb, const char *dbname, const char *suffix)
{
    char *ident = PQescapeIdentifier(rt_pg_conn(pg), dbname, strlen(dbname));
    assert_non_null(ident);
    char sql[256];
    snprintf(sql, sizeof sql, "%s %s%s", verb, ident, suffix);
    PQfreemem(ident);
    if (rt_pg_exec(pg, sql, 0, NULL, NULL) != RT_OK) fail_msg("%s: %s", sql, rt_pg_errstr(pg));
}

rt_ch *rt_ch_new(void)
{
    rt_ch *h = calloc(1, sizeof *h);
    assert_non_null(h);
    char err[RT_ERRSTR_SIZE] = "";
    if (rt_config_load(&h->cfg, NULL, err) != RT_OK) fail_msg("config: %s", err);

    rt_test_unique_name(h->id, sizeof h->id, "tclassify");
    char *dir = rt_test_tempdir();
    snprintf(h->dir, sizeof h->dir, "%s", dir);
    free(dir);
    snprintf(h->dbname, sizeof h->dbname, "%s", h->id);
    snprintf(h->redis_prefix, sizeof h->redis_prefix, "%s:", h->id);
    snprintf(h->ns, sizeof h->ns, "%s.retrig", h->id);
    snprintf(h->exchange_prefix, sizeof h->exchange_prefix, "%s/exchange/taskcluster-queue/v1/",
             h->id);
    snprintf(h->queue_name, sizeof h->queue_name, "%s", h->id);
    snprintf(h->pulse_queue, sizeof h->pulse_queue, "queue/guest/%s", h->queue_name);

    /* The database, created from the default one and migrated. */
    rt_pg *admin = NULL;
    if (rt_pg_connect(&admin, h->cfg.database_url, "test", err) != RT_OK)
        fail_msg("postgres: %s", err);
    exec_ddl(admin, "CREATE DATABASE", h->dbname, "");
    rt_pg_free(admin);
    url_with_database(h->database_url, sizeof h->database_url, h->cfg.database_url, h->dbname);
    if (rt_pg_connect(&h->pg, h->database_url, "test", err) != RT_OK)
        fail_msg("postgres %s: %s", h->dbname, err);
    if (rt_migrate_apply(h->pg, RT_TEST_SOURCE_DIR "/migrations",
                         RT_TEST_SOURCE_DIR "/sql/functions", NULL, NULL, NULL, NULL, NULL,
                         err) != RT_OK)
        fail_msg("migrate: %s", err);

    if (rt_redis_connect(&h->redis, h->cfg.redis_url, NULL, err) != RT_OK)
        fail_msg("redis: %s", err);

    rt_amqp_options opts;
    rt_amqp_options_from_config(&opts, &h->cfg, "test");
    opts.confirm_timeout_ms = 10000;
    opts.prefetch = 100;
    if (rt_amqp_new(&h->amqp, &opts, err) != RT_OK) fail_msg("amqp: %s", err);
    if (rt_amqp_ensure_connected(h->amqp, 10000) != RT_OK)
        fail_msg("amqp: %s", rt_amqp_errstr(h->amqp));

    if (rt_fake_start(&h->fake, NULL) != 0) fail_msg("the fake upstream did not start");

    rt_ch_setenv(h, "DATABASE_URL", h->database_url);
    rt_ch_setenv(h, "REDIS_KEY_PREFIX", h->redis_prefix);
    rt_ch_setenv(h, "AMQP_NAMESPACE", h->ns);
    rt_ch_setenv(h, "PULSE_EXCHANGE_PREFIX", h->exchange_prefix);
    rt_ch_setenv(h, "PULSE_QUEUE_NAME", h->queue_name);
    rt_ch_setenv(h, "TASKCLUSTER_ROOT_URL", h->fake.base_url);
    rt_ch_setenv(h, "TREEHERDER_URL", h->fake.base_url);
    rt_ch_setenv(h, "POOL_PREFIXES", RT_CH_FIXTURE_POOLS);
    rt_ch_setenv(h, "RETRY_DELAYS_MS", "300,600");
    rt_ch_setenv(h, "HTTP_MAX_ATTEMPTS", "1");
    rt_ch_setenv(h, "LOG_LEVEL", "info");
    return h;
}

void rt_ch_setenv(rt_ch *h, const char *key, const char *value)
{
    char *assignment = NULL;
    if (asprintf(&assignment, "RETRIG_%s=%s", key, value) < 0) fail_msg("out of memory");
    size_t klen = strlen("RETRIG_") + strlen(key) + 1; /* through '=' */
    for (size_t i = 0; i < h->nenv; i++) {
        if (!strncmp(h->env[i], assignment, klen)) {
            free(h->env[i]);
            h->env[i] = assignment;
            goto out;
        }
    }
    assert_true(h->nenv < RT_CH_MAX_ENV);
    h->env[h->nenv++] = assignment;
out:
    if (!strcmp(key, "RETRY_DELAYS_MS"))
        snprintf(h->retry_delays, sizeof h->retry_delays, "%s", value);
}

/* The environment of a worker: ours, then the parent's minus the keys we set. */
static char **worker_environment(const rt_ch *h)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + h->nenv + 1, sizeof *env);
    assert_non_null(env);
    size_t k = 0;
    for (size_t i = 0; i < h->nenv; i++) env[k++] = h->env[i];
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        bool ours = false;
        for (size_t j = 0; eq && j < h->nenv; j++)
            if (!strncmp(h->env[j], environ[i], (size_t)(eq - environ[i]) + 1)) ours = true;
        if (!ours) env[k++] = environ[i];
    }
    return env;
}

/* Whether the log has a line with the JSON string "<message>" ("consuming"). */
static bool log_says(const char *path, const char *message)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[4096], quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", message);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (strstr(line, quoted)) found = true;
    fclose(f);
    return found;
}

/* Forks and execs RT_TEST_BIN_DIR/<program> with the worker environment; its stdout and
 * stderr go to <dir>/worker-<pid>.log. */
static pid_t spawn_worker(rt_ch *h, const char *program, char **env)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", RT_TEST_BIN_DIR, program);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        char log[256]; /* named after the pid: never reused by a later worker */
        snprintf(log, sizeof log, "%s/worker-%d.log", h->dir, (int)getpid());
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
            dup2(fd, STDOUT_FILENO);
            close(fd);
        }
        char *argv[] = {path, NULL};
        execve(argv[0], argv, env);
        _exit(127);
    }
    return pid;
}

/* Waits until worker `index` logs its ready message ("consuming"); fails the test when it
 * exits or is late. */
static void wait_consuming(rt_ch *h, size_t index, int64_t deadline)
{
    char log[256];
    snprintf(log, sizeof log, "%s/worker-%d.log", h->dir, (int)h->workers[index]);
    while (!log_says(log, h->ready[index])) {
        int status;
        if (waitpid(h->workers[index], &status, WNOHANG) == h->workers[index]) {
            h->workers[index] = 0;
            char *text = rt_test_read_file(log, NULL);
            fail_msg("worker %zu exited during start-up:\n%s", index, text);
        }
        if (rt_test_now_ms() > deadline) fail_msg("worker %zu did not start consuming", index);
        sleep_ms(20);
    }
}

size_t rt_ch_spawn_program(rt_ch *h, const char *program)
{
    assert_true(h->nworkers < RT_CH_MAX_WORKERS);
    assert_true(strlen(program) < sizeof h->programs[0]);
    char **env = worker_environment(h);
    size_t index = h->nworkers++;
    snprintf(h->programs[index], sizeof h->programs[0], "%s", program);
    snprintf(h->ready[index], sizeof h->ready[0], "consuming");
    h->workers[index] = spawn_worker(h, program, env);
    free(env);
    return index;
}

bool rt_ch_log_says(const rt_ch *h, size_t index, const char *message)
{
    char log[256];
    snprintf(log, sizeof log, "%s/worker-%d.log", h->dir, (int)h->workers[index]);
    return log_says(log, message);
}

void rt_ch_start_workers(rt_ch *h, size_t n) { rt_ch_start_program(h, "retrig-classify", n); }

void rt_ch_start_program(rt_ch *h, const char *program, size_t n)
{
    rt_ch_start_program_ready(h, program, n, "consuming");
}

void rt_ch_start_program_ready(rt_ch *h, const char *program, size_t n, const char *ready)
{
    assert_true(h->nworkers + n <= RT_CH_MAX_WORKERS);
    assert_true(strlen(program) < sizeof h->programs[0]);
    assert_true(strlen(ready) < sizeof h->ready[0]);
    char **env = worker_environment(h);
    size_t first = h->nworkers;
    for (size_t i = 0; i < n; i++) {
        snprintf(h->programs[h->nworkers], sizeof h->programs[0], "%s", program);
        snprintf(h->ready[h->nworkers], sizeof h->ready[0], "%s", ready);
        h->workers[h->nworkers] = spawn_worker(h, program, env);
        h->nworkers++;
    }
    free(env);
    int64_t deadline = rt_test_now_ms() + 20000;
    for (size_t i = first; i < h->nworkers; i++) wait_consuming(h, i, deadline);
}

void rt_ch_restart_worker(rt_ch *h, size_t index, int sig)
{
    assert_true(index < h->nworkers && h->workers[index] > 0);
    kill(h->workers[index], sig);
    int status;
    if (waitpid(h->workers[index], &status, 0) != h->workers[index])
        fail_msg("waitpid: %s", strerror(errno));
    char **env = worker_environment(h);
    h->workers[index] = spawn_worker(h, h->programs[index], env);
    free(env);
    wait_consuming(h, index, rt_test_now_ms() + 20000);
}

size_t rt_ch_respawn_exited(rt_ch *h)
{
    size_t restarted = 0;
    for (size_t i = 0; i < h->nworkers; i++) {
        int status = 0;
        if (h->workers[i] <= 0 || waitpid(h->workers[i], &status, WNOHANG) != h->workers[i])
            continue;
        fprintf(stderr,
                "worker %d (%s) exited on its own with status %d (signal %d); its log: "
                "%s/worker-%d.log\n",
                (int)h->workers[i], h->programs[i], WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0, h->dir, (int)h->workers[i]);
        char **env = worker_environment(h);
        h->workers[i] = spawn_worker(h, h->programs[i], env);
        free(env);
        wait_consuming(h, i, rt_test_now_ms() + 20000);
        restarted++;
    }
    return restarted;
}

pid_t rt_ch_worker_pid(const rt_ch *h, size_t index)
{
    return index < h->nworkers ? h->workers[index] : 0;
}

int rt_ch_stop_workers(rt_ch *h, int timeout_ms)
{
    for (size_t i = 0; i < h->nworkers; i++)
        if (h->workers[i] > 0) kill(h->workers[i], SIGTERM);
    int bad = 0;
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    for (size_t i = 0; i < h->nworkers; i++) {
        if (h->workers[i] <= 0) continue;
        int status = 0;
        pid_t r;
        while ((r = waitpid(h->workers[i], &status, WNOHANG)) == 0 && rt_test_now_ms() < deadline)
            sleep_ms(10);
        if (r != h->workers[i]) {
            kill(h->workers[i], SIGKILL);
            waitpid(h->workers[i], &status, 0);
            fprintf(stderr, "worker %d did not stop within %d ms\n", (int)h->workers[i],
                    timeout_ms);
            bad++;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr,
                    "worker %d ended with status %d (signal %d); its log: %s/worker-%d.log\n",
                    (int)h->workers[i], WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0, h->dir, (int)h->workers[i]);
            bad++;
        }
        h->workers[i] = 0;
    }
    h->nworkers = 0;
    return bad;
}

void rt_ch_settle(rt_ch *h, const char *program, const char *queue, size_t workers, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    for (;;) {
        uint32_t left = 0;
        while (rt_amqp_queue_depth(h->amqp, queue, &left) == RT_OK && left > 0 &&
               rt_test_now_ms() < deadline)
            sleep_ms(20);
        assert_int_equal(rt_ch_stop_workers(h, 10000), 0);
        if (rt_amqp_queue_depth(h->amqp, queue, &left) != RT_OK)
            fail_msg("depth of %s: %s", queue, rt_amqp_errstr(h->amqp));
        if (left == 0) return;
        if (rt_test_now_ms() > deadline) fail_msg("%u messages still in %s", left, queue);
        rt_ch_start_program(h, program, workers);
    }
}

void rt_ch_declare_pulse(rt_ch *h)
{
    if (rt_amqp_declare_queue(h->amqp, h->pulse_queue, NULL) != RT_OK)
        fail_msg("declare %s: %s", h->pulse_queue, rt_amqp_errstr(h->amqp));
    for (size_t i = 0; i < 3; i++) {
        char exchange[256];
        snprintf(exchange, sizeof exchange, "%s%s", h->exchange_prefix, PULSE_EVENTS[i]);
        if (rt_amqp_declare_exchange(h->amqp, exchange, "topic") != RT_OK ||
            rt_amqp_bind_queue(h->amqp, h->pulse_queue, exchange, "#") != RT_OK)
            fail_msg("declare %s: %s", exchange, rt_amqp_errstr(h->amqp));
    }
}

static void delete_everything(rt_ch *h)
{
    const char *suffixes[] = {"retrigger", "classify-retry", "decide", "dead-letter"};
    for (size_t i = 0; i < 4; i++) {
        char q[256];
        snprintf(q, sizeof q, "%s.%s", h->ns, suffixes[i]);
        if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
    }
    char delays[64], *save = NULL;
    snprintf(delays, sizeof delays, "%s", h->retry_delays);
    for (char *d = strtok_r(delays, ", ", &save); d; d = strtok_r(NULL, ", ", &save)) {
        char q[256];
        snprintf(q, sizeof q, "%s.classify-retry.delay.%s", h->ns, d);
        if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
        snprintf(q, sizeof q, "%s.retrigger.delay.%s", h->ns, d);
        if (rt_amqp_delete_queue(h->amqp, q) != RT_OK) {}
    }
    if (rt_amqp_delete_queue(h->amqp, h->pulse_queue) != RT_OK) {}
    char x[256];
    snprintf(x, sizeof x, "%s.dlx", h->ns);
    if (rt_amqp_delete_exchange(h->amqp, x) != RT_OK) {}
    if (rt_amqp_delete_exchange(h->amqp, h->ns) != RT_OK) {}
    for (size_t i = 0; i < 3; i++) {
        snprintf(x, sizeof x, "%s%s", h->exchange_prefix, PULSE_EVENTS[i]);
        if (rt_amqp_delete_exchange(h->amqp, x) != RT_OK) {}
    }
}

void rt_ch_free(rt_ch *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->nworkers; i++) {
        if (h->workers[i] > 0) {
            kill(h->workers[i], SIGKILL);
            waitpid(h->workers[i], NULL, 0);
        }
    }
    if (h->amqp) delete_everything(h);
    rt_amqp_free(h->amqp);
    if (h->redis) rt_ch_flush_redis(h);
    rt_redis_free(h->redis);
    rt_pg_free(h->pg);
    char err[RT_ERRSTR_SIZE];
    rt_pg *admin = NULL;
    if (h->dbname[0] && getenv("RT_TEST_KEEP_DB")) {
        fprintf(stderr, "classify harness: database %s kept (RT_TEST_KEEP_DB)\n", h->dbname);
    } else if (h->dbname[0] && rt_pg_connect(&admin, h->cfg.database_url, "test", err) == RT_OK) {
        char *ident = PQescapeIdentifier(rt_pg_conn(admin), h->dbname, strlen(h->dbname));
        char sql[256];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", ident ? ident : "");
        PQfreemem(ident);
        if (rt_pg_exec(admin, sql, 0, NULL, NULL) != RT_OK)
            fprintf(stderr, "drop database: %s\n", rt_pg_errstr(admin));
        rt_pg_free(admin);
    }
    rt_fake_stop(&h->fake);
    if (h->dir[0] && !getenv("RT_TEST_KEEP_LOGS")) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", h->dir);
        if (system(cmd) != 0) {}
    } else if (h->dir[0]) {
        fprintf(stderr, "worker logs kept in %s\n", h->dir);
    }
    for (size_t i = 0; i < h->nenv; i++) free(h->env[i]);
    rt_config_free(&h->cfg);
    free(h);
}

void rt_ch_scenario(rt_ch *h, json_t *scenario)
{
    char *text = json_dumps(scenario, JSON_COMPACT);
    assert_non_null(text);
    int status = rt_fake_load_scenario(&h->fake, text);
    free(text);
    if (status != 200) fail_msg("the fake refused the scenario (HTTP %d)", status);
}

/* primary.<taskId>.<runId>.<workerGroup>.<workerId>.<provisionerId>.<workerType>.
 * <schedulerId>.<taskGroupId>._ from a (raw or wrapped) body; "primary" when unknown. */
static void primary_key(char *out, size_t size, const char *body, size_t len)
{
    snprintf(out, size, "primary");
    json_t *root = json_loadb(body, len, 0, NULL);
    if (!json_is_object(root)) goto out;
    json_t *msg = json_object_get(root, "payload") ? json_object_get(root, "payload") : root;
    json_t *status = json_object_get(msg, "status");
    const char *task = json_string_value(json_object_get(status, "taskId"));
    json_t *run_id = json_object_get(msg, "runId");
    if (!task || !json_is_integer(run_id)) goto out;
    const char *queue = json_string_value(json_object_get(status, "taskQueueId"));
    char prov[128] = "_", type[128] = "_";
    if (json_string_value(json_object_get(status, "provisionerId"))) {
        snprintf(prov, sizeof prov, "%s",
                 json_string_value(json_object_get(status, "provisionerId")));
        snprintf(type, sizeof type, "%s", json_string_value(json_object_get(status, "workerType")));
    } else if (queue && strchr(queue, '/')) {
        snprintf(prov, sizeof prov, "%.*s", (int)(strchr(queue, '/') - queue), queue);
        snprintf(type, sizeof type, "%s", strchr(queue, '/') + 1);
    }
    const char *group = json_string_value(json_object_get(msg, "workerGroup"));
    const char *worker = json_string_value(json_object_get(msg, "workerId"));
    const char *scheduler = json_string_value(json_object_get(status, "schedulerId"));
    const char *task_group = json_string_value(json_object_get(status, "taskGroupId"));
    snprintf(out, size, "primary.%s.%lld.%s.%s.%s.%s.%s.%s._", task,
             (long long)json_integer_value(run_id), group ? group : "_", worker ? worker : "_",
             prov, type, scheduler ? scheduler : "_", task_group ? task_group : "_");
out:
    json_decref(root);
}

void rt_ch_publish(rt_ch *h, const char *event, const char *body, size_t len, const char *route,
                   const char *message_id)
{
    char exchange[256], key[1024], cc[512];
    snprintf(exchange, sizeof exchange, "%s%s", h->exchange_prefix, event);
    primary_key(key, sizeof key, body, len);
    const char *ccs[1] = {cc};
    if (route) snprintf(cc, sizeof cc, "route.%s", route);
    rt_amqp_publish_opts opts = {
        .message_id = message_id, .cc = route ? ccs : NULL, .cc_count = route ? 1 : 0};
    if (rt_amqp_publish(h->amqp, exchange, key, body, len, &opts) != RT_OK)
        fail_msg("publish to %s: %s", exchange, rt_amqp_errstr(h->amqp));
}

void rt_ch_line_history(rt_ch *h, const char *bugsug_fixture, int runs, int failures)
{
    size_t len = 0;
    char *body = rt_test_read_file(rt_test_fixture(bugsug_fixture), &len);
    rt_bugsug sug;
    char err[RT_ERRSTR_SIZE] = "";
    rt_bugsug_options opts = {0};
    assert_int_equal(rt_bugsug_parse(body, len, &opts, &sug, err), RT_OK);
    free(body);
    assert_true(sug.nlines >= 1);
    const rt_failure_line *line = &sug.lines[0];
    char n[16], k[16];
    snprintf(n, sizeof n, "%d", runs);
    snprintf(k, sizeof k, "%d", failures);
    const char *params[] = {n, k, line->test, line->signature, line->hash_hex};
    assert_int_equal(
        rt_ch_sql_int(
            h,
            "WITH r AS (INSERT INTO history_runs (source, run_key, repository, project,"
            " branch, branch_class, branch_key, push, revision, run_at,"
            " complete_results) SELECT 'taskcluster', 'adaptive-' || i, 'gecko',"
            " 'autoland', 'autoland', 'main', 'autoland', (1000 + i)::text,"
            " 'rev' || i, now() - make_interval(mins => 5 * i), true"
            " FROM generate_series(1, $1::integer) i RETURNING id, run_at, push),"
            " t AS (INSERT INTO history_tests (run_id, run_at, test, group_name, status, failed,"
            " message, signature, signature_hash) SELECT r.id, r.run_at, $3, '', CASE WHEN"
            " r.push::integer - 1000 <= $2::integer THEN 'FAIL' ELSE 'PASS' END,"
            " r.push::integer - 1000 <= $2::integer, 'm', CASE WHEN r.push::integer -"
            " 1000 <= $2::integer THEN $4 END, CASE WHEN r.push::integer - 1000 <="
            " $2::integer THEN $5 END FROM r RETURNING 1) SELECT count(*) FROM t",
            5, params),
        runs);
    rt_bugsug_free(&sug);
}

long long rt_ch_sql_int(rt_ch *h, const char *sql, int nparams, const char *const *params)
{
    PGresult *res = NULL;
    if (rt_pg_exec(h->pg, sql, nparams, params, &res) != RT_OK)
        fail_msg("%s: %s", sql, rt_pg_errstr(h->pg));
    long long v = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) ? atoll(PQgetvalue(res, 0, 0)) : 0;
    PQclear(res);
    return v;
}

char *rt_ch_sql_text(rt_ch *h, const char *sql, int nparams, const char *const *params)
{
    PGresult *res = NULL;
    if (rt_pg_exec(h->pg, sql, nparams, params, &res) != RT_OK)
        fail_msg("%s: %s", sql, rt_pg_errstr(h->pg));
    char *v = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) ? strdup(PQgetvalue(res, 0, 0)) : NULL;
    PQclear(res);
    return v;
}

long long rt_ch_wait_int(rt_ch *h, int timeout_ms, long long want, const char *sql, int nparams,
                         const char *const *params)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    long long v;
    while ((v = rt_ch_sql_int(h, sql, nparams, params)) != want && rt_test_now_ms() < deadline)
        sleep_ms(20);
    return v;
}

const char *rt_ch_verdict(rt_ch *h, const char *task_id, int run_id)
{
    static char out[128];
    char run[16];
    snprintf(run, sizeof run, "%d", run_id);
    const char *params[] = {task_id, run};
    char *v = rt_ch_sql_text(h,
                             "SELECT verdict || '/' || verdict_reason FROM runs"
                             " WHERE task_id = $1 AND run_id = $2::integer",
                             2, params);
    snprintf(out, sizeof out, "%s", v ? v : "");
    free(v);
    return out;
}

const char *rt_ch_wait_verdict(rt_ch *h, const char *task_id, int run_id, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    const char *v;
    while (!*(v = rt_ch_verdict(h, task_id, run_id)) && rt_test_now_ms() < deadline) sleep_ms(20);
    return v;
}

unsigned rt_ch_queue_depth(rt_ch *h, const char *suffix)
{
    char q[256];
    snprintf(q, sizeof q, "%s.%s", h->ns, suffix);
    uint32_t n = 0;
    if (rt_amqp_queue_depth(h->amqp, q, &n) != RT_OK)
        fail_msg("depth of %s: %s", q, rt_amqp_errstr(h->amqp));
    return n;
}

unsigned rt_ch_wait_queue_depth(rt_ch *h, const char *suffix, unsigned want, int timeout_ms)
{
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    unsigned depth;
    while ((depth = rt_ch_queue_depth(h, suffix)) != want && rt_test_now_ms() < deadline)
        sleep_ms(20);
    return depth;
}

void rt_ch_take(rt_ch *h, const char *suffix, size_t count, int timeout_ms, rt_ch_message **out)
{
    char q[256];
    snprintf(q, sizeof q, "%s.%s", h->ns, suffix);
    size_t slot = !strcmp(suffix, "retrigger")     ? 0
                  : !strcmp(suffix, "dead-letter") ? 1
                  : !strcmp(suffix, "decide")      ? 2
                                                   : 3;
    if (slot == 3) fail_msg("rt_ch_take: unknown queue %s", suffix);
    if (!h->consuming[slot]) {
        if (rt_amqp_consume(h->amqp, q) != RT_OK)
            fail_msg("consume %s: %s", q, rt_amqp_errstr(h->amqp));
        h->consuming[slot] = true;
    }
    rt_ch_message *msgs = calloc(count + 1, sizeof *msgs);
    assert_non_null(msgs);
    size_t got = 0;
    int64_t deadline = rt_test_now_ms() + timeout_ms;
    while (got < count && rt_test_now_ms() < deadline) {
        rt_amqp_message m = {0};
        if (rt_amqp_next(h->amqp, &m, 100) != RT_OK) continue;
        if (strcmp(m.queue, q) != 0) fail_msg("a message from %s while taking from %s", m.queue, q);
        const char *reason = rt_amqp_message_header(&m, "x-retrig-reason");
        msgs[got].body = strdup(m.body);
        msgs[got].message_id = m.message_id ? strdup(m.message_id) : NULL;
        msgs[got].reason = reason ? strdup(reason) : NULL;
        got++;
        if (rt_amqp_ack(h->amqp, &m) != RT_OK) fail_msg("ack: %s", rt_amqp_errstr(h->amqp));
        rt_amqp_message_free(&m);
    }
    if (got < count) fail_msg("only %zu of %zu messages arrived in %s", got, count, q);
    *out = msgs;
}

void rt_ch_messages_free(rt_ch_message *messages, size_t count)
{
    if (!messages) return;
    for (size_t i = 0; i < count; i++) {
        free(messages[i].body);
        free(messages[i].message_id);
        free(messages[i].reason);
    }
    free(messages);
}

const char *rt_ch_today(void)
{
    static char day[11];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    return day;
}

int rt_ch_budget_counter(rt_ch *h, const char *platform)
{
    char key[512];
    snprintf(key, sizeof key, "%sbudget:%s:%s", h->redis_prefix, platform, rt_ch_today());
    const char *argv[] = {"GET", key};
    redisReply *reply = NULL;
    if (rt_redis_command_argv(h->redis, 2, argv, NULL, &reply) != RT_OK)
        fail_msg("redis GET: %s", rt_redis_errstr(h->redis));
    int v = reply->type == REDIS_REPLY_STRING ? atoi(reply->str) : -1;
    freeReplyObject(reply);
    return v;
}

void rt_ch_flush_redis(rt_ch *h)
{
    char cursor[32] = "0", pattern[128];
    snprintf(pattern, sizeof pattern, "%s*", h->redis_prefix);
    do {
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
        redisReply *reply = NULL;
        if (rt_redis_command_argv(h->redis, 6, argv, NULL, &reply) != RT_OK)
            fail_msg("redis SCAN: %s", rt_redis_errstr(h->redis));
        snprintf(cursor, sizeof cursor, "%s", reply->element[0]->str);
        redisReply *keys = reply->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            const char *del[] = {"DEL", keys->element[i]->str};
            redisReply *r = NULL;
            if (rt_redis_command_argv(h->redis, 2, del, NULL, &r) != RT_OK)
                fail_msg("redis DEL: %s", rt_redis_errstr(h->redis));
            freeReplyObject(r);
        }
        freeReplyObject(reply);
    } while (strcmp(cursor, "0") != 0);
}

/* ---- test data ---- */

void rt_ch_slugid(char out[23])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    static bool seeded;
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        srandom((unsigned)(ts.tv_nsec ^ getpid()));
        seeded = true;
    }
    for (int i = 0; i < 22; i++) out[i] = alphabet[random() % 64];
    /* A v4 UUID's fixed bits, as slugid encodes them. */
    out[8] = "QRST"[random() % 4];
    out[10] = "CGKOSWaeimquy26-"[random() % 16];
    out[21] = "AQgw"[random() % 4];
    out[22] = '\0';
}

char *rt_ch_failed_message(const char *pulse_fixture, const char *task_id,
                           const char *task_group_id)
{
    char *text = rt_test_failed_variant(pulse_fixture, 1);
    json_t *body = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(body);
    json_t *status = json_object_get(body, "status");
    if (task_id) json_object_set_new(status, "taskId", json_string(task_id));
    if (task_group_id) json_object_set_new(status, "taskGroupId", json_string(task_group_id));
    text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    assert_non_null(text);
    return text;
}

json_t *rt_ch_task_definition(const char *fixture, const char *task_group_id, const char *label)
{
    json_error_t error;
    json_t *def = json_load_file(rt_test_fixture(fixture), 0, &error);
    if (!def) fail_msg("cannot load %s: %s", fixture, error.text);
    if (task_group_id) json_object_set_new(def, "taskGroupId", json_string(task_group_id));
    if (label) {
        json_t *tags = json_object_get(def, "tags");
        if (!tags) json_object_set_new(def, "tags", tags = json_object());
        json_object_set_new(tags, "label", json_string(label));
    }
    return def;
}

json_t *rt_ch_actions_artifact(const char *decision_task_id, const char *revision)
{
    json_t *replace = json_object();
    if (decision_task_id)
        json_object_set_new(replace, RT_CH_ACTIONS_DECISION, json_string(decision_task_id));
    if (revision) json_object_set_new(replace, RT_CH_ACTIONS_REVISION, json_string(revision));
    return json_pack("{s:s, s:s, s:o}", "name", "public/actions.json", "fixture",
                     "taskcluster/actions.json", "replace", replace);
}

int rt_ch_validate_schema(const char *schema_path, const char *json_text, char **error)
{
    static const char script[] =
        "import json, sys, jsonschema\n"
        "schema = json.load(open(sys.argv[1]))\n"
        "doc = json.load(open(sys.argv[2]))\n"
        "cls = jsonschema.validators.validator_for(schema)\n"
        "errors = sorted(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc),"
        " key=lambda e: list(e.path))\n"
        "for e in errors: print('/'.join(map(str, e.path)) + ': ' + e.message)\n"
        "sys.exit(1 if errors else 0)\n";
    char *dir = rt_test_tempdir();
    char doc[256], out[256], cmd[1024];
    snprintf(doc, sizeof doc, "%s/doc.json", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    rt_test_write_file(doc, json_text);
    char py[256];
    snprintf(py, sizeof py, "%s/validate.py", dir);
    rt_test_write_file(py, script);
    snprintf(cmd, sizeof cmd, "%s '%s' '%s' '%s' > '%s' 2>&1", RT_TEST_PYTHON, py, schema_path, doc,
             out);
    int status = system(cmd);
    if (error) *error = rt_test_read_file(out, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) {}
    free(dir);
    return status == 0 ? 0 : 1;
}

void rt_ch_eligible_scenario(rt_ch *h, int n, const char *tag, char (*task_ids)[23],
                             char (*groups)[23])
{
    static const char def_fixture[] = "taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json";
    json_error_t error;
    json_t *def = json_load_file(rt_test_fixture(def_fixture), 0, &error);
    if (!def) fail_msg("%s: %s", def_fixture, error.text);
    json_t *tags = json_object_get(def, "tags");
    const char *label = json_string_value(json_object_get(tags, "label"));
    json_t *scenario = json_pack("{s:{}, s:{}}", "tasks", "artifacts");
    for (int i = 0; i < n; i++) {
        rt_ch_slugid(task_ids[i]);
        rt_ch_slugid(groups[i]);
        char l[256];
        snprintf(l, sizeof l, "%s-%s-%d", label, tag, i);
        json_t *t = json_deep_copy(tags);
        json_object_set_new(t, "label", json_string(l));
        json_object_set_new(json_object_get(scenario, "tasks"), task_ids[i],
                            json_pack("{s:s, s:{s:s, s:o}}", "fixture", def_fixture, "override",
                                      "taskGroupId", groups[i], "tags", t));
        json_object_set_new(json_object_get(scenario, "artifacts"), task_ids[i],
                            json_pack("{s:[{s:s, s:s}]}", "0", "name",
                                      "public/test_info/mochitest_errorsummary.log", "fixture",
                                      "errorsummary/mochitest-browser-chrome_errorsummary.log"));
    }
    rt_ch_scenario(h, scenario);
    json_decref(scenario);
    json_decref(def);
}
