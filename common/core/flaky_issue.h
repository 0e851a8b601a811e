/* SPDX-License-Identifier: MPL-2.0 */
/* flaky_issue.h - what retrig flaky-issues does about one flaky test, and the text it
 * writes. Pure: no I/O, no clock (now is passed in).
 *
 * The state machine: a test with no issue that is flaky gets one (CREATE); an open issue
 * gets its figures comment edited while the test stays flaky and its figures changed
 * (UPDATE); an open issue of a test that has not failed for quiet_days is closed with a
 * comment (CLOSE); a closed issue of a test that is flaky again is reopened (REOPEN).
 *
 * The figures comment starts with RT_FLAKY_FIGURES_HEAD, so it is found again too.
 *
 * Never two issues for one test: the first line of every issue body is a hidden marker,
 * "<!-- retrig-flaky: <16 hex digits> -->", the FNV-1a 64 hash of the project and the test;
 * the tracker is searched for it before creating (after a crash between creating and
 * recording, the issue is found and adopted). Only a first line counts: a failure message
 * quoted further down cannot pose as another test's marker.
 *
 * Text: test names go in Markdown code spans, the failure excerpt in a code fence longer
 * than any run of backticks in it, control characters (C0, DEL, C1) and bidirectional
 * controls dropped from every text (titles too), '|' escaped in table cells (a branch
 * named "@octocat|" stays one code span: it neither ends its cell nor mentions anyone), its
 * size bounded and never cut inside a UTF-8 character. Thread-safe (no shared state). */
#ifndef RETRIG_COMMON_FLAKY_ISSUE_H
#define RETRIG_COMMON_FLAKY_ISSUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/core/errors.h"
#include "common/core/strlist.h"

#define RT_FLAKY_MARKER_SIZE   40   /* "retrig-flaky: " + 16 hex digits + NUL */
#define RT_FLAKY_TITLE_MAX     200  /* bytes of an issue title */
#define RT_FLAKY_EXCERPT_MAX   2000 /* bytes of the failure excerpt */
#define RT_FLAKY_TEST_NAME_MAX 1000 /* bytes of the test name shown in a body */

typedef enum { RT_FLAKY_NONE, RT_FLAKY_OPEN, RT_FLAKY_CLOSED } rt_flaky_state;

typedef enum {
    RT_FLAKY_NOTHING,
    RT_FLAKY_CREATE,
    RT_FLAKY_UPDATE,
    RT_FLAKY_CLOSE,
    RT_FLAKY_REOPEN,
} rt_flaky_action;

/* A test's runs and failures in one variant: for GitHub the matrix job (the artifact's name,
 * github_run_variants of migration 0038), for Taskcluster the platform and build type
 * ("linux1804-64-qr/debug", taskcluster_run_variants of migration 0040). */
typedef struct rt_flaky_variant {
    const char *name;
    long runs, failures;
} rt_flaky_variant;

/* The one variant with failures when the test ran on at least two and failed on that one
 * only ("flaky on Windows only"); NULL otherwise. */
const char *rt_flaky_only_variant(const rt_flaky_variant *variants, size_t n);
/* "Windows", "macOS" or "Linux" when every variant with failures names that OS family
 * (common/core/matrix_variant.h) and the test also ran on a variant naming another family,
 * which by then passed: "flaky on Windows only"; NULL otherwise (no failure, a failing
 * variant whose name names no OS, failures on two families, or no other family ran it). */
const char *rt_flaky_only_os(const rt_flaky_variant *variants, size_t n);

/* The figures of one test over the flaky window, as the issue shows them. */
typedef struct rt_flaky_figures {
    const char *project; /* OWNER/NAME */
    const char *test;
    int window_days;
    long runs, failures;
    double failure_rate;
    long branches, prs, main_failures;
    double push_failure_chance; /* pushes that saw it fail / pushes that ran it */
    long prs_ran, prs_failed;   /* pull requests and other branches that ran it, saw it fail */
    long rerun_flips;           /* failed, then passed on a re-run of the same commit */
    long fork_branches;         /* of branches, pull requests from forks by authors not
                                   trusted (flaky_issues_trusted_associations): shown as
                                   evidence, never counted toward opening an issue */
    long outcome_flaky;         /* runs whose report says FLAKY: failed, then passed in it */
    long outcome_disabled, outcome_collection_error, outcome_build_failed; /* no failures */
    bool flaky;                         /* the rule on trusted branches, or main when configured */
    time_t last_failure;                /* 0: never */
    const char *first_failure_time;     /* ISO-8601, may be NULL */
    const char *first_failure_branch;   /* may be NULL */
    const char *first_failure_revision; /* may be NULL */
    const char *first_failure_url;      /* the run's page, may be NULL */
    const char *message;                /* the failing JUnit message, may be NULL */
    const rt_flaky_variant *variants;   /* by name; none for projects without variants */
    size_t nvariants;
    const char *variant_kind; /* what a variant is, in the table's header; NULL: "matrix job" */
} rt_flaky_figures;

/* "retrig-flaky: <16 hex>" of project and test into out (RT_FLAKY_MARKER_SIZE bytes). */
void rt_flaky_marker(const char *project, const char *test, char out[RT_FLAKY_MARKER_SIZE]);
/* True when an issue body's first line is the hidden marker "<!-- MARKER -->". */
bool rt_flaky_marker_matches(const char *first_line, const char *marker);

/* The first line of the figures comment retrig edits (one per issue). */
#define RT_FLAKY_FIGURES_HEAD "<!-- retrig-flaky-figures -->"

/* The action for a test in `state`; *reason (static text) says why. */
rt_flaky_action rt_flaky_decide(rt_flaky_state state, bool flaky, bool figures_changed,
                                time_t last_failure, time_t now, int quiet_days,
                                const char **reason);
const char *rt_flaky_action_name(rt_flaky_action action);

/* The figures as stored and compared (flaky_issues.figures). NULL when out of memory. */
json_t *rt_flaky_figures_json(const rt_flaky_figures *f);
/* True when what an issue shows changed: runs, failures, branches, PRs, main failures or
 * re-run flips (stored may be NULL: changed). */
bool rt_flaky_figures_changed(json_t *stored, json_t *fresh);

/* The longest prefix of s, at most max bytes, that ends on a UTF-8 character boundary. */
size_t rt_utf8_prefix(const char *s, size_t max);

/* Texts (malloc'd; NULL when out of memory). */
char *rt_flaky_title(const rt_flaky_figures *f);
char *rt_flaky_body(const rt_flaky_figures *f, const char *marker);
char *rt_flaky_comment(const rt_flaky_figures *f, const char *when);
char *rt_flaky_close_comment(const rt_flaky_figures *f, int quiet_days);
char *rt_flaky_reopen_comment(const rt_flaky_figures *f);

/* GitHub: POST /repos/{o}/{r}/issues {title, body, labels: [label]}. */
json_t *rt_flaky_github_issue(const char *title, const char *body, const char *label);

/* Bugzilla: the product and component of a test from "PREFIX=Product::Component" items,
 * first match wins ("*" matches every test). RT_ENOTFOUND when none matches. */
RT_MUSTCHECK int rt_flaky_bugzilla_component(const rt_strlist *map, const char *test, char *product,
                                             size_t product_size, char *component,
                                             size_t component_size);
/* Bugzilla: POST /rest/bug {product, component, summary, version "unspecified", op_sys and
 * platform "Unspecified", type "defect", keywords, whiteboard "[<marker>]", description}. */
json_t *rt_flaky_bugzilla_bug(const char *product, const char *component, const char *title,
                              const char *body, const rt_strlist *keywords, const char *marker);

#endif
