/* SPDX-License-Identifier: MPL-2.0 */
/* failure_line.h - the one normaliser of failure lines (TEST-UNEXPECTED-* and PROCESS-CRASH),
 * so that the same failure compares equal across runs (retrig-decide) and across pushes and
 * branches (test history). Pure: no I/O, no globals. Thread-safe (each call owns its output).
 *
 * A line is kept only when, after the clean-up below, its first " | " field holds a status:
 * a word starting "TEST-UNEXPECTED-", or the word PROCESS-CRASH (followed by a space or
 * nothing). Only a harness's labels may come before it, words of upper-case letters, digits,
 * '_' and '-' ("REFTEST TEST-UNEXPECTED-FAIL | ...", "596 INFO TEST-UNEXPECTED-FAIL | ...",
 * "INFO TEST-UNEXPECTED-TIMEOUT | ...", "REFTEST PROCESS-CRASH | ..."), as in the `search` of
 * Treeherder's bug_suggestions; they are dropped. Anything else before it ("I/GeckoDump(730):
 * 110 INFO TEST-UNEXPECTED-FAIL", an Android echo Treeherder skips too) is not a failure line.
 * What follows the status is split on " | " into TEST | MESSAGE (MESSAGE keeps any further
 * " | "), and a crash line by its layout (rule 5). The signature is "STATUS | TEST | MESSAGE"
 * ("STATUS | TEST" when MESSAGE is empty, "STATUS MESSAGE" when TEST is), and the hash is
 * FNV-1a 64 of the signature; parsing a signature again gives the same signature, and so
 * does a signature behind a label ("REFTEST " + signature). Two lines are the same failure
 * when their signatures are byte-equal; the hash is only a fast pre-check and an index key.
 *
 * Rules, applied in this order. Conservative by design: a rule only removes what differs
 * from run to run of one failure, never what tells two failures apart; a wrongly split
 * failure costs one retrigger set, a wrongly merged one calls an intermittent a regression.
 *
 *  1. ANSI escapes are removed:       "\e[31mTEST-UNEXPECTED-FAIL\e[0m | a.js | x"
 *                                     -> "TEST-UNEXPECTED-FAIL | a.js | x"
 *  2. Control characters become spaces, runs of whitespace become one space, the line is
 *     trimmed:                        "TEST-UNEXPECTED-FAIL |  a.js |\tx  " -> "... | a.js | x"
 *  3. Harness prefixes that Treeherder also strips are removed at the start: the mozharness
 *     "HH:MM:SS LEVEL - ", then "GECKO(1234) | ", "PID 1234 | " or "[1234] ".
 *  4. The labels before the status are dropped; STATUS is kept as is
 *     ("TEST-UNEXPECTED-TIMEOUT" and "-FAIL" stay different).
 *  5. TEST is the identity and is kept as is (query strings, "==" reftest pairs and all).
 *     A crash line names its test in one of the layouts Treeherder reads (the fields after
 *     "PROCESS-CRASH | "):
 *     a. mozcrash and mozlog today, the crash first: "<reason> [@ signature] | <test>"
 *        ("application crashed [@ mozalloc_abort] | dom/a/test_b.html"; the reason may be a
 *        MOZ_CRASH message, the signature "[None]" or "[unknown top frame]"): the last field
 *        is TEST, the ones before it MESSAGE. It is this layout when the first field ends with
 *        such a signature and the last one does not.
 *     b. older harnesses, the test first: "<test> | application crashed [@ signature]"
 *        ("Shutdown | application crashed [@ PR_GetThreadPrivate]", a Java exception,
 *        "automation.py | application crashed (minidump found)"): TEST, then MESSAGE.
 *     c. no test: where the test would be, mozlog writes "pid: 1234" and older harnesses a
 *        minidump id (a UUID, bare or in braces, with ".dmp"/".extra"): that field is
 *        dropped, TEST is empty, so neither pid nor dump id makes two runs' lines differ.
 *     d. one field: a crash signature or a run id as above is MESSAGE (or nothing), anything
 *        else TEST ("PROCESS-CRASH | Automation Error: Missing end of test marker").
 *     So every layout of one crash gives one signature, "PROCESS-CRASH | <test> | <reason>
 *     [@ signature]", and the test is the one the per-test history and tracking bugs know.
 *  6. In MESSAGE only, volatile parts become placeholders (a number glued to letters, as
 *     in "test123456" or "abc0x1f", is never touched):
 *     a. GUIDs/UUIDs (8-4-4-4-12 hex; braces around them stay):
 *        "{0b6c7a3e-1d2f-4c5b-9a8e-7f6d5c4b3a21} closed" -> "{<uuid>} closed"
 *     b. hex numbers with 9 or more digits (64-bit pointers); 8-digit nsresult codes such
 *        as 0x80004005 stay, they name the error: "at 0x7f3a2b1c4d00" -> "at 0x<addr>";
 *        an offset in a module after " + " stays, it names the crash site
 *        ("[@ libc.so.6 + 0x0000000000114cf9]")
 *     c. timestamps, ISO 8601 date-times and clock times:
 *        "at 2024-05-01T12:34:56.789Z" -> "at <time>", "at 12:34:56.789" -> "at <time>"
 *     d. temporary directories, the temp root and its first component:
 *        "/tmp/tmpa1b2c3.mozrunner/prefs.js" -> "<tmp>/prefs.js",
 *        "/var/folders/x/y/T/tmpq/a" -> "<tmp>/a",
 *        "C:\Users\task_1\AppData\Local\Temp\tmpq\a" -> "<tmp>\a"
 *     e. ports of loopback URLs (localhost, 127.0.0.1, [::1]):
 *        "http://localhost:49152/x" -> "http://localhost:<port>/x"
 *     f. process ids, the number only: "pid 1234" -> "pid <n>", "PID: 12" -> "PID: <n>",
 *        "pid=7" -> "pid=<n>"; "GECKO(1234)" -> "GECKO(<n>)";
 *        "[Parent 1234, Main Thread]" -> "[Parent <n>, Main Thread]"
 *        (any "[Word 1234," prefix: Parent, Child, GPU, RDD, Socket, Utility, ...)
 *     g. durations, a number and a time unit (ms, s, sec, secs, second(s), millisecond(s),
 *        minute(s), min, mins, us, ns): "took 1234ms" -> "took <n>ms",
 *        "after 370 seconds" -> "after <n> seconds", "in 1.5s" -> "in <n>s"
 *     h. any other number of 6 or more digits (epoch times, byte counts, task ids):
 *        "task_1700000000 died" -> "task_<n> died"; shorter numbers stay, so
 *        "got 3, expected 4" and "got 5, expected 4" remain different failures. A number
 *        keeps its fraction ("1234567.25" -> "<n>.25"), and the digits of a fraction are
 *        never a number of their own ("value 0.1234567" stays).
 */
#ifndef RETRIG_COMMON_FAILURE_LINE_H
#define RETRIG_COMMON_FAILURE_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/errors.h"

#define RT_FAILURE_LINE_PREFIX    "TEST-UNEXPECTED-"
#define RT_FAILURE_LINE_CRASH     "PROCESS-CRASH"
#define RT_FAILURE_LINE_MAX_INPUT (64 * 1024) /* bytes of one raw line considered */

typedef struct rt_failure_line {
    char *status;    /* "TEST-UNEXPECTED-FAIL" */
    char *test;      /* the test path, "" when the line has none */
    char *message;   /* normalised message, "" when none */
    char *signature; /* "STATUS | TEST | MESSAGE" */
    uint64_t hash;   /* FNV-1a 64 of signature */
    char hash_hex[17];
} rt_failure_line;

/* Normalises one raw line (not NUL-terminated; at most RT_FAILURE_LINE_MAX_INPUT bytes are
 * read, a longer line is cut there). Returns RT_OK with *line filled, RT_ENOTFOUND when the
 * line is not a failure line (line zeroed), or RT_ENOMEM. */
RT_MUSTCHECK int rt_failure_line_parse(const char *text, size_t len, rt_failure_line *line);

/* Applies rules 1, 2 and 6 to a message alone, into a malloc'd string (NULL: no memory).
 * Idempotent: normalising the result again gives the same text. */
char *rt_failure_line_normalise_message(const char *text, size_t len);

/* Same failure: equal hash and equal signature. */
bool rt_failure_line_equal(const rt_failure_line *a, const rt_failure_line *b);

/* FNV-1a 64 of len bytes. */
uint64_t rt_failure_line_hash(const char *text, size_t len);

/* Deep copy (RT_ENOMEM on failure, dst zeroed). */
RT_MUSTCHECK int rt_failure_line_copy(rt_failure_line *dst, const rt_failure_line *src);

/* Frees the strings; the struct is zeroed. NULL is a no-op. */
void rt_failure_line_free(rt_failure_line *line);

#endif
