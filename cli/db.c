/* SPDX-License-Identifier: MPL-2.0 */
/* db.c - the commands' one way into Postgres, and what they tell a person when it fails. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/io/file.h"
#include "common/io/log.h"

/* A hint for what the server or libpq said, or NULL. */
static const char *hint_for(const char *sqlstate, const char *message)
{
    if (sqlstate && !strcmp(sqlstate, "42P01")) /* undefined_table */
        return "is the database migrated? run: retrig migrate";
    if (sqlstate && !strcmp(sqlstate, "3D000")) /* invalid_catalog_name */
        return "the database does not exist: create it, then run retrig migrate";
    if (message && strstr(message, "password authentication failed"))
        return "check the user and password in database_url (RETRIG_DATABASE_URL)";
    if (message && (strstr(message, "Connection refused") || strstr(message, "could not connect")))
        return "is Postgres running? locally: bash deploy/local/services.sh start";
    if (message && strstr(message, "does not exist") && strstr(message, "database"))
        return "the database does not exist: create it, then run retrig migrate";
    return NULL;
}

int rt__cli_connect(const rt_config *cfg, const char *program, rt_pg **pg)
{
    char errstr[RT_ERRSTR_SIZE] = "";
    *pg = NULL;
    if (!cfg->database_url || !*cfg->database_url) {
        rt_log_error("database_url is not set", "hint",
                     "set database_url in the configuration or RETRIG_DATABASE_URL");
        return 1;
    }
    if (rt_pg_connect(pg, cfg->database_url, program, errstr) != RT_OK) {
        rt_log_error("cannot connect to Postgres", "error", errstr, "hint", hint_for(NULL, errstr));
        return 1;
    }
    return 0;
}

int rt__cli_connect_read(const rt_config *cfg, const char *program, rt_pg **pg)
{
    if (!cfg->history_read_url || !*cfg->history_read_url) return rt__cli_connect(cfg, program, pg);
    char errstr[RT_ERRSTR_SIZE] = "";
    *pg = NULL;
    if (rt_pg_connect(pg, cfg->history_read_url, program, errstr) != RT_OK) {
        rt_log_error("cannot connect to the read-only Postgres (history_read_url)", "error", errstr,
                     "hint", hint_for(NULL, errstr));
        return 1;
    }
    /* a replica is read-only anyway; on the primary this keeps the commands from writing */
    if (rt_pg_exec(*pg, "SET default_transaction_read_only = on", 0, NULL, NULL) != RT_OK) {
        rt__cli_db_error(*pg, "cannot open a read-only session (history_read_url)");
        rt_pg_free(*pg);
        *pg = NULL;
        return 1;
    }
    return 0;
}

void rt__cli_db_error(rt_pg *pg, const char *what)
{
    const char *message = rt_pg_errstr(pg);
    rt_log_error(what, "error", message, "hint", hint_for(rt_pg_sqlstate(pg), message));
}

int rt__cli_parse_long(const char *text, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int rt__cli_parse_double(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min) || !(v <= max)) return -1;
    *out = v;
    return 0;
}

int rt__cli_format(const char *arg, bool *json)
{
    if (strcmp(arg, "table") && strcmp(arg, "json")) {
        rt_log_error("--format is table or json", "value", arg);
        return 2;
    }
    *json = !strcmp(arg, "json");
    return 0;
}

int rt__cli_token_file(rt_config *cfg, const char *path)
{
    char *text = NULL, errstr[RT_ERRSTR_SIZE] = "";
    size_t len = 0;
    if (rt_file_read(path, 64 * 1024, &text, &len, errstr) != RT_OK) {
        rt_log_error("cannot read --token-file", "file", path, "error", errstr);
        return 2;
    }
    text[strcspn(text, "\r\n")] = '\0';
    int rc = RT_EINVAL;
    if (text[0]) {
        rt_log_add_secret(text);
        rc = rt_config_set(cfg, "github_token", text, "--token-file", errstr);
    }
    memset(text, 0, len);
    free(text);
    if (rc != RT_OK) {
        rt_log_error("--token-file holds no usable token", "file", path);
        return 2;
    }
    return 0;
}

int rt__cli_write_file(const char *path, const char *what, int (*write)(FILE *f, const void *ctx),
                       const void *ctx)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        rt_log_error("the output path is too long", "file", path);
        return 1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rt_log_error("cannot write", "what", what, "file", tmp, "error", strerror(errno));
        return 1;
    }
    int written = write(f, ctx);
    if (fclose(f) != 0 || written != 0) {
        rt_log_error("cannot write", "what", what, "file", tmp);
        remove(tmp);
        return 1;
    }
    if (rename(tmp, path) != 0) {
        rt_log_error("cannot write", "what", what, "file", path, "error", strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

char *rt__cli_read_file(const char *path, size_t max, size_t *len, const char *what)
{
    char *text = NULL, errstr[RT_ERRSTR_SIZE] = "", message[128];
    if (rt_file_read(path, max, &text, len, errstr) == RT_OK) return text;
    snprintf(message, sizeof message, "cannot read %s", what);
    rt_log_error(message, "file", path, "error", errstr);
    return NULL;
}
