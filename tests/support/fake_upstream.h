/* SPDX-License-Identifier: MPL-2.0 */
/* fake_upstream.h - starts tests/fake-upstream/fake_upstream.py as a child process on a
 * free port and talks to its /_control/ interface (see tests/fake-upstream/README.md).
 * The child dies with the test process (PR_SET_PDEATHSIG, plus an atexit handler), so an
 * aborted test leaves no server behind. Not thread-safe: start and stop from one thread. */
#ifndef RETRIG_TESTS_SUPPORT_FAKE_UPSTREAM_H
#define RETRIG_TESTS_SUPPORT_FAKE_UPSTREAM_H

#include <jansson.h>
#include <sys/types.h>

typedef struct rt_fake {
    pid_t pid;         /* the python child, 0 when stopped */
    int port;          /* where it listens on 127.0.0.1 */
    char base_url[64]; /* "http://127.0.0.1:PORT", no trailing slash */
    char dir[128];     /* temporary folder holding the port file */
} rt_fake;

/* Starts the fake (optionally loading a scenario file) and waits, at most 20 s, until it
 * answers. Returns 0, or -1 with a message on stderr. */
int rt_fake_start(rt_fake *fake, const char *scenario_path);
/* SIGTERM, wait (2 s), then SIGKILL; removes the temporary folder. NULL/stopped: no-op. */
void rt_fake_stop(rt_fake *fake);

/* Calls the fake: method "GET"/"POST", path such as "/_control/calls?path_prefix=/api",
 * json_body NULL or text. *response (may be NULL) receives the malloc'd body. Returns the
 * HTTP status, or -1 when the call itself failed. */
int rt_fake_control(rt_fake *fake, const char *method, const char *path, const char *json_body,
                    char **response);

/* POST /_control/reset: forgets calls, faults, triggers and nonces, keeps the data. */
int rt_fake_reset(rt_fake *fake);
/* POST /_control/scenario with a JSON scenario text (merged into the data). */
int rt_fake_load_scenario(rt_fake *fake, const char *json);
/* POST /_control/faults with one rule object or a list of them. */
int rt_fake_add_fault(rt_fake *fake, const char *json);
/* The calls seen whose path starts with path_prefix (NULL: all), as a JSON array owned by
 * the caller; NULL on failure. */
json_t *rt_fake_calls(rt_fake *fake, const char *path_prefix);
/* The hook triggers seen, as a JSON array owned by the caller; NULL on failure. */
json_t *rt_fake_triggers(rt_fake *fake);
/* base_url + path in a static buffer (valid until the next call). */
const char *rt_fake_url(const rt_fake *fake, const char *path);

#endif
