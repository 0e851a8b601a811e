/* SPDX-License-Identifier: MPL-2.0 */
/* test_config.c - configuration: defaults, file, environment overrides, errors, secrets. */
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common/config.h"
#include "common/io/log.h"
#include "common/policy.h"

static char *write_temp(const char *text)
{
    char *dir = rt_test_tempdir();
    char *path = malloc(strlen(dir) + 32);
    assert_non_null(path);
    sprintf(path, "%s/retrig.conf", dir);
    rt_test_write_file(path, text);
    free(dir);
    return path;
}

static void clear_environment(void)
{
    extern char **environ;
    for (;;) {
        char **e = environ;
        while (e && *e && strncmp(*e, "RETRIG_", 7) != 0) e++;
        if (!e || !*e) break;
        char name[128];
        size_t n = strcspn(*e, "=");
        snprintf(name, sizeof name, "%.*s", (int)n, *e);
        unsetenv(name);
    }
}

static int setup(void **state)
{
    (void)state;
    clear_environment();
    rt_log_clear_secrets();
    return 0;
}

static void test_defaults_point_at_local_services(void **state)
{
    (void)state;
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_string_equal(cfg.redis_url, "redis://127.0.0.1:6380/0");
    assert_string_equal(cfg.pulse_url, cfg.amqp_url); /* pulse_url defaults to amqp_url */
    assert_int_equal(cfg.amqp_prefetch, 64);
    assert_int_equal(cfg.log_level, RT_LOG_INFO);
    assert_null(cfg.taskcluster_access_token);
    rt_config_free(&cfg);
}

static void test_environment_overrides_file(void **state)
{
    (void)state;
    char *path = write_temp("# comment\n"
                            "redis_url = redis://10.0.0.1:6379/2\n"
                            "amqp_prefetch = 50\n"
                            "treeherder_url = \"https://th.example\"\n");
    setenv("RETRIG_REDIS_URL", "redis://127.0.0.1:7000/3", 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, path, err), RT_OK);
    assert_string_equal(cfg.redis_url, "redis://127.0.0.1:7000/3"); /* env wins */
    assert_int_equal(cfg.amqp_prefetch, 50);                        /* from the file */
    assert_string_equal(cfg.treeherder_url, "https://th.example");  /* quotes removed */
    assert_string_equal(cfg.source, path);
    rt_config_free(&cfg);
    free(path);
}

static void test_comments_after_values_and_quoted_values(void **state)
{
    (void)state;
    char *path = write_temp("dry_run = true   # act later\n"
                            "redis_url = redis://h:1/0#not-a-comment\n"
                            "treeherder_url = \"https://th.example/#x\"  # quoted\n");
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, path, err), RT_OK);
    assert_true(cfg.dry_run);
    assert_string_equal(cfg.redis_url, "redis://h:1/0#not-a-comment");
    assert_string_equal(cfg.treeherder_url, "https://th.example/#x");
    rt_config_free(&cfg);
    free(path);
    path = write_temp("treeherder_url = \"https://th.example\" extra\n");
    assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
    assert_non_null(strstr(err, "line 1"));
    rt_config_free(&cfg);
    free(path);
}

static void test_config_path_from_environment(void **state)
{
    (void)state;
    char *path = write_temp("amqp_prefetch = 7\n");
    setenv("RETRIG_CONFIG", path, 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_int_equal(cfg.amqp_prefetch, 7);
    rt_config_free(&cfg);
    free(path);
}

static void test_missing_file_names_the_file(void **state)
{
    (void)state;
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, "/nonexistent/retrig.conf", err), RT_ECONFIG);
    assert_non_null(strstr(err, "/nonexistent/retrig.conf"));
    rt_config_free(&cfg);
}

static void test_unknown_key_names_key_and_line(void **state)
{
    (void)state;
    char *path = write_temp("amqp_prefetch = 5\n\nredis_ulr = redis://x\n");
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
    assert_non_null(strstr(err, "redis_ulr"));
    assert_non_null(strstr(err, "line 3"));
    assert_non_null(strstr(err, path));
    rt_config_free(&cfg);
    free(path);
}

static void test_bad_values_name_the_key(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"amqp_prefetch = lots\n", "amqp_prefetch"},       {"amqp_prefetch = 0\n", "amqp_prefetch"},
        {"http_max_attempts = 4x\n", "http_max_attempts"}, {"log_level = loud\n", "log_level"},
        {"redis_url = http://localhost\n", "redis_url"},   {"just some words\n", "line 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = write_temp(cases[i][0]);
        rt_config cfg;
        char err[RT_ERRSTR_SIZE] = "";
        assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
        if (!strstr(err, cases[i][1])) fail_msg("'%s' does not name '%s'", err, cases[i][1]);
        rt_config_free(&cfg);
        free(path);
    }
}

/* TLS to Redis would need hiredis 1.x; Debian 12 has 0.14. A rediss:// URL must not be
 * taken for something it is not: the error says what is missing and where the way round it
 * is documented. */
static void test_rediss_url_is_refused_with_the_way_round_it(void **state)
{
    (void)state;
    char *path = write_temp("redis_url = rediss://:secret-pw@redis.example.net:6380/0\n");
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
    if (!strstr(err, "redis_url") || !strstr(err, "TLS") || !strstr(err, "docs/operations.md"))
        fail_msg("unexpected error: %s", err);
    if (strstr(err, "secret-pw")) fail_msg("the error prints the password: %s", err);
    rt_config_free(&cfg);
    free(path);
}

static void test_culprit_keys_load_and_are_validated(void **state)
{
    (void)state;
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_true(cfg.culprit_confidence > 0.9499 && cfg.culprit_confidence < 0.9501);
    assert_int_equal(cfg.culprit_max_depth, 20);
    assert_int_equal(cfg.culprit_max_jobs, 120);
    assert_int_equal(cfg.culprit_probe_deadline_minutes, 180);
    assert_int_equal(cfg.culprit_projects.count, 1);
    assert_string_equal(cfg.culprit_projects.items[0], "autoland");
    rt_config_free(&cfg);

    char *path = write_temp("culprit_confidence = 0.99\nculprit_max_depth = 30\n"
                            "culprit_max_jobs = 0\nculprit_projects = autoland, try*\n"
                            "culprit_probe_deadline_minutes = 30\n");
    assert_int_equal(rt_config_load(&cfg, path, err), RT_OK);
    assert_true(cfg.culprit_confidence > 0.9899 && cfg.culprit_confidence < 0.9901);
    assert_int_equal(cfg.culprit_max_depth, 30);
    assert_int_equal(cfg.culprit_max_jobs, 0);
    assert_int_equal(cfg.culprit_probe_deadline_minutes, 30);
    assert_int_equal(cfg.culprit_projects.count, 2);
    char *printed = NULL;
    size_t printed_len = 0;
    FILE *out = open_memstream(&printed, &printed_len);
    rt_config_print(&cfg, out);
    fclose(out);
    assert_non_null(strstr(printed, "culprit_confidence = 0.99\n"));
    free(printed);
    rt_config_free(&cfg);
    free(path);

    static const char *const bad[] = {
        "culprit_confidence = 1\n",      "culprit_confidence = 0.4\n",
        "culprit_confidence = 95%\n",    "culprit_confidence = nan\n",
        "culprit_confidence = 0x1p-1\n", "culprit_confidence = 9.5e-1\n",
        "culprit_max_depth = 100\n",     "culprit_max_depth = 0\n",
        "culprit_max_jobs = -1\n",       "culprit_probe_deadline_minutes = 0\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        path = write_temp(bad[i]);
        int rc = rt_config_load(&cfg, path, err);
        if (rc != RT_ECONFIG || !strstr(err, "culprit_"))
            fail_msg("'%s' gave %d: %s", bad[i], rc, err);
        rt_config_free(&cfg);
        free(path);
    }
}

/* A key that was removed is refused with what became of it, not as a typo. */
static void test_a_removed_key_says_what_became_of_it(void **state)
{
    (void)state;
    char *path = write_temp("decide_drop_single_tracking = true\n");
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
    assert_non_null(strstr(err, "'decide_drop_single_tracking' was removed"));
    assert_non_null(strstr(err, "reproduced-known-intermittent"));
    assert_non_null(strstr(err, "line 1"));
    rt_config_free(&cfg);
    unlink(path);
    free(path);
}

static void test_unknown_environment_variable_is_an_error(void **state)
{
    (void)state;
    setenv("RETRIG_DATABSE_URL", "postgresql://x", 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_ECONFIG);
    assert_non_null(strstr(err, "RETRIG_DATABSE_URL"));
    rt_config_free(&cfg);
}

static void test_bad_environment_value_names_the_variable(void **state)
{
    (void)state;
    setenv("RETRIG_HTTP_TIMEOUT_MS", "-5", 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_ECONFIG);
    assert_non_null(strstr(err, "RETRIG_HTTP_TIMEOUT_MS"));
    rt_config_free(&cfg);
}

static void test_secret_files_are_read_and_never_printed(void **state)
{
    (void)state;
    char *dir = rt_test_tempdir();
    char token_path[512], password_path[512];
    snprintf(token_path, sizeof token_path, "%s/token", dir);
    snprintf(password_path, sizeof password_path, "%s/pulse", dir);
    rt_test_write_file(token_path, "tc-token-0123456789\n");
    rt_test_write_file(password_path, "pulse-pass-9876\n");
    setenv("RETRIG_TASKCLUSTER_ACCESS_TOKEN_FILE", token_path, 1);
    setenv("RETRIG_PULSE_PASSWORD_FILE", password_path, 1);
    setenv("RETRIG_PULSE_URL", "amqps://retrig-user@pulse.example:5671/", 1);

    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_string_equal(cfg.taskcluster_access_token, "tc-token-0123456789");
    assert_string_equal(cfg.pulse_url, "amqps://retrig-user:pulse-pass-9876@pulse.example:5671/");

    char *printed = NULL;
    size_t printed_len = 0;
    FILE *out = open_memstream(&printed, &printed_len);
    rt_config_print(&cfg, out);
    rt_log_set_output(out);
    rt_log_write(RT_LOG_ERROR, "oops", "token", cfg.taskcluster_access_token, "url", cfg.pulse_url,
                 (char *)NULL);
    rt_log_set_output(NULL);
    fclose(out);
    assert_null(strstr(printed, "tc-token-0123456789"));
    assert_null(strstr(printed, "pulse-pass-9876"));
    assert_non_null(strstr(printed, "pulse_url = amqps://retrig-user:***@pulse.example"));
    free(printed);
    rt_config_free(&cfg);
    free(dir);
}

/* The password libpq reads from a connection string, malloc'd ("" when none). */
static char *libpq_password(const char *conninfo)
{
    char *error = NULL;
    PQconninfoOption *options = PQconninfoParse(conninfo, &error);
    if (!options) fail_msg("libpq does not parse %s: %s", conninfo, error ? error : "?");
    char *password = NULL;
    for (PQconninfoOption *o = options; o->keyword; o++)
        if (!strcmp(o->keyword, "password")) password = strdup(o->val ? o->val : "");
    PQconninfoFree(options);
    assert_non_null(password);
    return password;
}

/* database_url's password is masked in every form libpq reads, wherever it sits and whatever
 * it holds (a '"', a space, a quote, under 4 bytes), and libpq reads "***" as the password of
 * the masked text: the mask covers exactly the password (issue 30). */
static void test_database_url_password_is_masked_in_every_libpq_form(void **state)
{
    (void)state;
    static const struct {
        const char *conninfo, *masked;
    } cases[] = {
        {"postgresql://retrig:s3\"cr et@db.example:5432/retrig",
         "postgresql://retrig:***@db.example:5432/retrig"},
        {"postgres://retrig:p?w:x@db1.example,db2.example/retrig?sslmode=require",
         "postgres://retrig:***@db1.example,db2.example/retrig?sslmode=require"},
        {"postgresql://retrig:pw@db.example/retrig", "postgresql://retrig:***@db.example/retrig"},
        {"postgresql://db.example/retrig?sslmode=require&password=qu3ry%26pw&user=retrig",
         "postgresql://db.example/retrig?sslmode=require&password=***&user=retrig"},
        {"postgresql:///retrig?host=/run/postgresql&pass%77ord=enc0ded-key",
         "postgresql:///retrig?host=/run/postgresql&pass%77ord=***"},
        {"host=db.example port=5432 user=retrig password=kv-s3cret dbname=retrig",
         "host=db.example port=5432 user=retrig password=*** dbname=retrig"},
        {"host=db.example password = 'sp ace\\'quote\\\\' dbname=retrig",
         "host=db.example password = *** dbname=retrig"},
        {"password=esc\\ aped\\'pw host=db.example", "password=*** host=db.example"},
        {"  dbname = retrig\tpassword='' user=retrig",
         "  dbname = retrig\tpassword=*** user=retrig"},
        {"postgresql://retrig@db.example/retrig", "postgresql://retrig@db.example/retrig"},
        {"dbname=retrig host=/run/postgresql", "dbname=retrig host=/run/postgresql"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *masked = rt_config_mask_conninfo(cases[i].conninfo);
        assert_non_null(masked);
        if (strcmp(masked, cases[i].masked))
            fail_msg("%s\n masked as %s\n expected  %s", cases[i].conninfo, masked,
                     cases[i].masked);
        char *password = libpq_password(cases[i].conninfo);
        char *after = libpq_password(masked);
        if (password[0]) assert_null(strstr(masked, password));
        /* A string with a password reads "***" once masked; one without is left as it is. */
        assert_string_equal(after, strcmp(masked, cases[i].conninfo) ? "***" : password);
        free(after);
        free(password);
        free(masked);
    }

    /* retrig config prints it masked, in each form. */
    setenv("RETRIG_DATABASE_URL", "postgresql://retrig:s3\"cr et@db.example:5432/retrig", 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    char *printed = NULL;
    size_t printed_len = 0;
    FILE *out = open_memstream(&printed, &printed_len);
    rt_config_print(&cfg, out);
    assert_int_equal(rt_config_set(&cfg, "database_url",
                                   "host=db.example user=retrig password='kv s3cret' dbname=retrig",
                                   "test", err),
                     RT_OK);
    rt_config_print(&cfg, out);
    fclose(out);
    assert_null(strstr(printed, "s3"));
    assert_non_null(
        strstr(printed, "database_url = postgresql://retrig:***@db.example:5432/retrig\n"));
    assert_non_null(
        strstr(printed, "database_url = host=db.example user=retrig password=*** dbname=retrig\n"));
    free(printed);
    rt_config_free(&cfg);
}

static void test_unreadable_secret_file_names_the_key(void **state)
{
    (void)state;
    setenv("RETRIG_TASKCLUSTER_ACCESS_TOKEN_FILE", "/nonexistent/token", 1);
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_ECONFIG);
    assert_non_null(strstr(err, "taskcluster_access_token_file"));
    assert_non_null(strstr(err, "/nonexistent/token"));
    rt_config_free(&cfg);
}

/* The verdict policy keys (common/decide_policy.h): defaults, a file, bad values. */
static void test_decide_policy_keys_load_and_are_validated(void **state)
{
    (void)state;
    rt_config cfg;
    char err[RT_ERRSTR_SIZE] = "";
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_string_equal(cfg.decide_policy, "seed");
    assert_true(cfg.decide_confidence == 0.95);
    assert_int_equal(cfg.decide_max_retriggers, 10);
    assert_true(cfg.decide_prior_regression == 0.15);
    rt_config_free(&cfg);

    char *path = write_temp("decide_policy = adaptive\ndecide_confidence = 0.99\n"
                            "decide_max_retriggers = 8\ndecide_prior_regression = 0.2\n");
    assert_int_equal(rt_config_load(&cfg, path, err), RT_OK);
    assert_string_equal(cfg.decide_policy, "adaptive");
    assert_true(cfg.decide_confidence == 0.99);
    assert_int_equal(cfg.decide_max_retriggers, 8);
    assert_true(cfg.decide_prior_regression == 0.2);
    char *printed = NULL;
    size_t printed_len = 0;
    FILE *out = open_memstream(&printed, &printed_len);
    rt_config_print(&cfg, out);
    fclose(out);
    assert_non_null(strstr(printed, "decide_confidence = 0.99\n"));
    assert_non_null(strstr(printed, "decide_prior_regression = 0.2\n"));
    free(printed);
    rt_config_free(&cfg);
    free(path);

    /* pooled (issue 32): the settle window and the deadline of a failing test's pooled set. */
    assert_int_equal(rt_config_load(&cfg, NULL, err), RT_OK);
    assert_int_equal(cfg.decide_pool_settle_s, 1200);
    assert_int_equal(cfg.decide_pool_deadline_minutes, 240);
    assert_false(rt_decide_policy_pooled(&cfg));
    rt_config_free(&cfg);
    path = write_temp("decide_policy = pooled\ndecide_pool_settle_s = 0\n"
                      "decide_pool_deadline_minutes = 30\n");
    assert_int_equal(rt_config_load(&cfg, path, err), RT_OK);
    assert_string_equal(cfg.decide_policy, "pooled");
    assert_int_equal(cfg.decide_pool_settle_s, 0);
    assert_int_equal(cfg.decide_pool_deadline_minutes, 30);
    assert_true(rt_decide_policy_pooled(&cfg));
    /* Per task, pooled keeps the seed rule (its verdict is stored as a shadow). */
    assert_int_equal(rt_decide_policy_from_config(&cfg), RT_POLICY_SEED);
    rt_config_free(&cfg);
    free(path);

    static const char *const bad[][2] = {
        {"decide_policy = mozci\n", "decide_policy"},
        {"decide_policy = pool\n", "decide_policy"},
        {"decide_pool_settle_s = -1\n", "decide_pool_settle_s"},
        {"decide_pool_settle_s = 86401\n", "decide_pool_settle_s"},
        {"decide_pool_deadline_minutes = 0\n", "decide_pool_deadline_minutes"},
        {"decide_confidence = 1\n", "decide_confidence"},
        {"decide_confidence = 0.5\n", "decide_confidence"},
        {"decide_confidence = high\n", "decide_confidence"},
        {"decide_confidence = nan\n", "decide_confidence"},
        {"decide_prior_regression = 0\n", "decide_prior_regression"},
        {"decide_max_retriggers = 0\n", "decide_max_retriggers"},
        {"decide_max_retriggers = 65\n", "decide_max_retriggers"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        path = write_temp(bad[i][0]);
        assert_int_equal(rt_config_load(&cfg, path, err), RT_ECONFIG);
        if (!strstr(err, bad[i][1])) fail_msg("'%s' does not name '%s'", err, bad[i][1]);
        rt_config_free(&cfg);
        free(path);
    }
}

static void test_every_key_has_help_and_keys_are_alphabetical(void **state)
{
    (void)state;
    for (const rt_config_key *k = rt_config_keys; k->name; k++) {
        assert_non_null(k->help);
        assert_true(strlen(k->help) > 10);
        if (k[1].name && strcmp(k->name, k[1].name) >= 0)
            fail_msg("keys not alphabetical: %s before %s", k->name, k[1].name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults_point_at_local_services, setup),
        cmocka_unit_test_setup(test_environment_overrides_file, setup),
        cmocka_unit_test_setup(test_comments_after_values_and_quoted_values, setup),
        cmocka_unit_test_setup(test_config_path_from_environment, setup),
        cmocka_unit_test_setup(test_missing_file_names_the_file, setup),
        cmocka_unit_test_setup(test_unknown_key_names_key_and_line, setup),
        cmocka_unit_test_setup(test_bad_values_name_the_key, setup),
        cmocka_unit_test_setup(test_rediss_url_is_refused_with_the_way_round_it, setup),
        cmocka_unit_test_setup(test_culprit_keys_load_and_are_validated, setup),
        cmocka_unit_test_setup(test_a_removed_key_says_what_became_of_it, setup),
        cmocka_unit_test_setup(test_unknown_environment_variable_is_an_error, setup),
        cmocka_unit_test_setup(test_bad_environment_value_names_the_variable, setup),
        cmocka_unit_test_setup(test_secret_files_are_read_and_never_printed, setup),
        cmocka_unit_test_setup(test_unreadable_secret_file_names_the_key, setup),
        cmocka_unit_test_setup(test_database_url_password_is_masked_in_every_libpq_form, setup),
        cmocka_unit_test_setup(test_decide_policy_keys_load_and_are_validated, setup),
        cmocka_unit_test_setup(test_every_key_has_help_and_keys_are_alphabetical, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
