/* SPDX-License-Identifier: MPL-2.0 */
/* culprit_window.h - parser of a culprit search window given as JSON (`retrig culprit
 * --pushes FILE`): an array, oldest first, of {"revision", "runs", "reproduced"} with an
 * optional "pending", from the first push (normally the known-good one) to the failing push.
 *
 *   revision    12 or 40 lowercase hex digits (a short or full Mercurial node); no two
 *               pushes may name the same revision (or one a prefix of the other)
 *   runs        finished runs of the label on that push that gave evidence, 0 where the
 *               label did not run (0..RT_CULPRIT_MAX_RUNS)
 *   reproduced  of those, runs that reproduced the failure line (0..runs)
 *   pending     runs asked for and not finished yet (optional, default 0)
 * The failing push (last) must have reproduced the line at least once. Untrusted input: the
 * document is at most RT_CULPRIT_WINDOW_MAX_BYTES, at most RT_CULPRIT_MAX_PUSHES pushes, an
 * unknown member or a duplicate one is refused (a misspelt "reproduced" must not read as 0).
 * Pure: no I/O; the window is a fixed-size struct (no allocation kept). Thread-safe. */
#ifndef RETRIG_COMMON_CULPRIT_WINDOW_H
#define RETRIG_COMMON_CULPRIT_WINDOW_H

#include <stddef.h>

#include "common/core/culprit.h"
#include "common/core/errors.h"

#define RT_CULPRIT_WINDOW_MAX_BYTES (1024L * 1024)

typedef struct rt_culprit_window {
    size_t count;
    char revisions[RT_CULPRIT_MAX_PUSHES][41];
    rt_culprit_push pushes[RT_CULPRIT_MAX_PUSHES];
} rt_culprit_window;

/* Parses and validates. RT_EPROTO (errstr names the push and the field) for JSON that is
 * not a valid window, RT_ETOOBIG past the bounds above, RT_ENOMEM. out is zeroed first. */
RT_MUSTCHECK int rt_culprit_window_parse(const char *text, size_t len, rt_culprit_window *out,
                                         char *errstr);

/* A 12- or 40-digit lowercase hex revision. */
bool rt_culprit_valid_revision(const char *s);

#endif
