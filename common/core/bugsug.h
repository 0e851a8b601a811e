/* SPDX-License-Identifier: MPL-2.0 */
/* bugsug.h - parser of Treeherder's bug_suggestions response into the normalised failure
 * lines (TEST-UNEXPECTED-*, PROCESS-CRASH) of one run
 * (GET /api/project/<repo>/jobs/<id>/bug_suggestions/).
 *
 * The response is a JSON array of {search, search_terms, path_end, bugs: {open_recent[],
 * all_others[]}, line_number, counter, failure_new_in_rev} (the last three only from the
 * live API). `search` is the error line Treeherder already cleaned; entries whose line is not
 * a failure line (TEST-UNEXPECTED-* or PROCESS-CRASH) are counted and skipped; each kept line goes
 * through rt_failure_line (common/core/failure_line.h), and a line seen twice in one run is kept
 * once. Untrusted input: the document and the line count are capped, a wrong type is RT_EPROTO with
 * a reason.
 *
 * Single tracking bugs. Treeherder's bug filer (ui/shared/BugFiler.jsx) files a bug for a
 * test rather than for one message as "Intermittent <test path> | single tracking bug", with
 * the keywords intermittent-failure and intermittent-testcase; sheriffs later rename the
 * prefix to "Frequent"/"Perma". Mozilla's tools recognise them by the summary alone
 * (mach test-info: summary.endswith("single tracking bug"), the test being the last word
 * before the " | "). Bug suggestions list such a bug for any failure of that test, because
 * Treeherder searches the bug cache by the test file name. A tracked line is context: it is
 * kept in `lines` like any other (a known intermittent that starts reproducing every time
 * is what sheriffs must see: verdict.h), and listed in `tracked` with its bug. The rule: a
 * line is tracked when one of its suggested
 * bugs (open_recent or all_others: an open bug not touched for a while is listed under
 * all_others) is
 *   - open: resolution "" or null, and status not RESOLVED, VERIFIED or CLOSED;
 *   - a single tracking bug: its summary, trimmed, ends with "| single tracking bug"
 *     (case-insensitive);
 *   - for this test: the last word before that " |" equals the line's test path with any
 *     "?query" removed, or is a suffix of it at a '/' and itself contains a '/' (the bug
 *     filer drops "layout/reftests/" and wpt query strings). A bare file name is not
 *     enough: bug suggestions also list same-named tests in other folders. A reftest's
 *     test is a pair, "a.html == a-ref.html" (or "!="), and the bug filer names both: the
 *     last three words before the " |" are the test, the same operator and the reference,
 *     each naming its half by the rule above (one reference serves many tests).
 * The intermittent-testcase keyword is not required (bugs filed by hand often lack it). */
#ifndef RETRIG_COMMON_BUGSUG_H
#define RETRIG_COMMON_BUGSUG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/core/failure_line.h"

#define RT_BUGSUG_MAX_LINES   100                 /* failure lines kept per run */
#define RT_BUGSUG_MAX_BYTES   (16L * 1024 * 1024) /* one response */
#define RT_BUGSUG_MAX_ENTRIES 100000              /* entries looked at */

typedef struct rt_bugsug_options {
    size_t max_lines; /* 0: RT_BUGSUG_MAX_LINES (never more) */
    size_t max_bytes; /* 0: RT_BUGSUG_MAX_BYTES */
} rt_bugsug_options;

typedef struct rt_bugsug_tracked {
    rt_failure_line line;
    long bug_id; /* the single tracking bug, -1 when it has no Bugzilla id */
} rt_bugsug_tracked;

typedef struct rt_bugsug {
    rt_failure_line *lines; /* the run's distinct failure lines, in response order */
    size_t nlines;
    rt_bugsug_tracked *tracked; /* copies of the lines tracked by a single tracking bug */
    size_t ntracked;
    size_t entries;     /* entries in the response */
    size_t other_lines; /* entries that are not TEST-UNEXPECTED lines */
    size_t duplicates;  /* lines seen again in the same run */
    size_t truncated;   /* lines beyond max_lines, not kept */
} rt_bugsug;

/* Parses one response. On failure returns RT_EPROTO (not JSON, or a wrong type: errstr
 * names the entry and field), RT_ETOOBIG or RT_ENOMEM, and *out is left empty.
 * opts may be NULL (defaults). */
RT_MUSTCHECK int rt_bugsug_parse(const char *json, size_t len, const rt_bugsug_options *opts,
                                 rt_bugsug *out, char *errstr);

/* Is this bug object (from bugs.open_recent/all_others) an open single tracking bug for
 * test? Exposed for tests and for `retrig explain`. */
bool rt_bugsug_is_single_tracking_bug(const char *summary, const char *status,
                                      const char *resolution, const char *test);

/* The single tracking bug of a line of this run (its id, -1 when it has none), or 0 when the
 * line is not tracked. */
long rt_bugsug_tracking_bug(const rt_bugsug *bs, const rt_failure_line *line);

void rt_bugsug_free(rt_bugsug *bs);

#endif
