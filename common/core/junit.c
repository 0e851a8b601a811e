/* SPDX-License-Identifier: MPL-2.0 */
/* junit.c - JUnit XML reports into test history rows, read as a stream with libxml2's
 * xmlTextReader; the producers' dialects (reruns, disabled, collection and build errors)
 * are described in junit.h. */
#include "common/core/junit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

#define MAX_DEPTH   256         /* nested elements */
#define MAX_MESSAGE (64 * 1024) /* bytes of a failure message kept */
#define MAX_PROLOG  (64 * 1024) /* bytes before the root element looked at for a DOCTYPE */

/* Outcomes of one testcase element, ranked: the highest child wins. */
enum { NONE, SKIPPED, ERRORED, FAILED };

/* The document is read as a stream (xmlTextReader): a testcase is added to the rows when
 * its end is read, and nothing of it is kept after. Building the whole tree first held
 * every node of the document at once (300,000 testcases: 445 MB). */
typedef struct reading {
    xmlTextReaderPtr reader;
    rt_history_rows *rows;
    rt_junit_stats *stats;
    char *errstr;
    char *suites[MAX_DEPTH]; /* the name of the testsuite open at each depth, or NULL */
    /* the testcase being read */
    int case_depth; /* -1 when none */
    long case_line;
    char *name, *classname, *file, *status_attribute, *message;
    int outcome;          /* NONE, SKIPPED, ERRORED, FAILED */
    int flaky_attempts;   /* flakyFailure/flakyError children: failed attempts before a pass */
    int rerun_attempts;   /* rerunFailure/rerunError children: further failed attempts */
    bool collection;      /* an <error message="collection failure"> (pytest) */
    bool message_generic; /* the message attribute says nothing ("Failed"): the text may */
    int message_rank;     /* 2: the message is a failure's or an error's, 1: an attempt's */
    int failure_depth;    /* the element whose text may be the message, or -1 */
    char error[200];      /* the parser's message for a document that is not well-formed */
    int error_line;
    /* pytest-rerunfailures: pytest writes one <testcase> per attempt, a rerun's without an
     * outcome element (junitxml ignores the "rerun" report), so a run of empty testcases of
     * one test is held until the next testcase says what they were */
    bool pytest;      /* pytest's: <testsuites name="pytest tests">, or <testsuite name="pytest"> */
    char *held_test;  /* the test of the empty testcases held, or NULL */
    char *held_scope; /* its group */
    int held;         /* how many */
} reading;

static void on_error(void *context, xmlErrorPtr e)
{
    reading *r = context;
    if (r->error[0] || !e) return; /* the first error says most */
    snprintf(r->error, sizeof r->error, "%s", e->message ? e->message : "not well-formed XML");
    r->error[strcspn(r->error, "\n")] = '\0';
    r->error_line = e->line;
}

/* True when the prolog (what comes before the root element) holds a DOCTYPE or any other
 * markup declaration. Looked at on the bytes, before libxml2 reads a thing: entity
 * declarations are where billion-laughs documents hide, and their expansion in attribute
 * values happens as a start tag is parsed. NUL bytes are skipped, so UTF-16 reads too. */
static bool has_doctype(const char *data, size_t len)
{
    char prolog[256];
    size_t n = 0;
    bool in_comment = false, in_pi = false;
    if (len > MAX_PROLOG) len = MAX_PROLOG;
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\0') continue;
        if (n == sizeof prolog - 1) { /* keep the last few bytes: enough to see "-->" or "<!" */
            memmove(prolog, prolog + n - 8, 8);
            n = 8;
        }
        prolog[n++] = c;
        prolog[n] = '\0';
        if (in_comment) {
            if (n >= 3 && !memcmp(prolog + n - 3, "-->", 3)) in_comment = false;
            continue;
        }
        if (in_pi) {
            if (n >= 2 && !memcmp(prolog + n - 2, "?>", 2)) in_pi = false;
            continue;
        }
        if (n >= 2 && prolog[n - 2] == '<') {
            if (c == '?') {
                in_pi = true;
            } else if (c == '!') {
                /* a comment, or a declaration: wait for the next two bytes to tell */
            } else {
                return false; /* the root element starts */
            }
        }
        if (n >= 4 && !memcmp(prolog + n - 4, "<!--", 4)) {
            in_comment = true;
        } else if (n >= 3 && prolog[n - 3] == '<' && prolog[n - 2] == '!' && c != '-') {
            return true; /* <!DOCTYPE, <!ENTITY, <![CDATA[ before the root: not JUnit */
        }
    }
    return false;
}

static bool named(reading *r, const char *name)
{
    const xmlChar *n = xmlTextReaderConstLocalName(r->reader);
    return n && !strcmp((const char *)n, name);
}

static char *attribute(reading *r, const char *name)
{
    return (char *)xmlTextReaderGetAttribute(r->reader, (const xmlChar *)name);
}

static void forget_case(reading *r)
{
    xmlFree(r->name);
    xmlFree(r->classname);
    xmlFree(r->file);
    xmlFree(r->status_attribute);
    free(r->message);
    r->name = r->classname = r->file = r->status_attribute = r->message = NULL;
    r->case_depth = r->failure_depth = -1;
    r->outcome = NONE;
    r->flaky_attempts = r->rerun_attempts = 0;
    r->collection = r->message_generic = false;
    r->message_rank = 0;
}

/* Messages that name no cause: gotestsum's "Failed", nose2's "test failure", go-junit-report's
 * "Build error", cargo-nextest's "test failure" type. */
static bool generic_message(const char *m)
{
    static const char *const generic[] = {"failed",  "failure",      "test failure",       "error",
                                          "Failed:", "build error",  "test failed",        "fail",
                                          "errored", "test errored", "collection failure", NULL};
    m += strspn(m, " \t\r\n");
    for (size_t i = 0; generic[i]; i++)
        if (!strcasecmp(m, generic[i])) return true;
    return false;
}

/* A line of a failure's text that says nothing: blank, or go test's own framing. */
static bool empty_line(const char *line, size_t n)
{
    static const char *const framing[] = {"=== RUN",  "=== PAUSE", "=== CONT", "--- FAIL",
                                          "--- PASS", "FAIL\t",    "FAIL ",    NULL};
    size_t blank = 0;
    while (blank < n && strchr(" \t", line[blank])) blank++;
    if (blank == n) return true;
    for (size_t i = 0; framing[i]; i++)
        if (n - blank >= strlen(framing[i]) &&
            !strncmp(line + blank, framing[i], strlen(framing[i])))
            return true;
    return false;
}

/* The last line of a Python traceback that does not start with a blank: the exception. */
static const char *exception_line(const char *text)
{
    const char *found = NULL;
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\r\n");
        if (n > 0 && !strchr(" \t", line[0]) && !empty_line(line, n)) found = line;
        line += n;
        line += strspn(line, "\r\n");
    }
    return found;
}

/* The text of a failure element as its message, when it has no message attribute or a
 * generic one: its first meaningful line (of a Python traceback, the exception). */
static int add_text(reading *r, const char *text)
{
    if (r->message && !r->message_generic) return RT_OK;
    const char *line = text;
    for (;;) {
        size_t n = strcspn(line, "\r\n");
        if (!empty_line(line, n)) {
            line += strspn(line, " \t");
            if (!strncmp(line, "Traceback (most recent call last):", 34) && exception_line(line))
                line = exception_line(line);
            line += strspn(line, " \t");
            n = strcspn(line, "\r\n");
            while (n > 0 && strchr(" \t", line[n - 1])) n--;
            if (n > MAX_MESSAGE) n = MAX_MESSAGE;
            char *m = strndup(line, n);
            if (!m) return RT_ENOMEM;
            free(r->message);
            r->message = m;
            r->message_generic = false;
            return RT_OK;
        }
        if (!line[n]) return RT_OK;
        line += n + 1;
    }
}

/* Notes a testcase set aside (malformed): counted, its reason kept while there is room. */
static void set_aside(reading *r, const char *reason)
{
    size_t i = r->stats->set_aside++;
    if (i < RT_JUNIT_ASIDE_REASONS)
        snprintf(r->stats->aside[i], sizeof r->stats->aside[i], "line %ld: %s", r->case_line,
                 reason);
}

/* The status a finished testcase stores, and whether it is a failure. */
static const char *case_status(const reading *r, bool *failed)
{
    *failed = false;
    const char *name = r->name;
    if (!strcmp(name, "[build failed]") || !strcmp(name, "[setup failed]")) return "BUILD_FAILED";
    if (r->collection && (!r->classname || !*r->classname)) return "COLLECTION_ERROR";
    switch (r->outcome) {
    case FAILED: *failed = true; return "FAIL";
    case ERRORED: *failed = true; return "ERROR";
    case SKIPPED: return "SKIP";
    default: break;
    }
    if (r->flaky_attempts > 0) {
        *failed = true;
        return "FLAKY";
    }
    if (r->status_attribute && !strcasecmp(r->status_attribute, "disabled")) return "DISABLED";
    return "PASS";
}

/* The empty testcases held, into the rows: one is a pass; more are reruns that ended in a
 * pass (every one but the last failed): FLAKY, as Surefire's flakyFailure. */
static int add_held(reading *r)
{
    if (!r->held_test) return RT_OK;
    bool flaky = r->held > 1;
    if (flaky) r->stats->failures++;
    int rc =
        rt_history_rows_add_test(r->rows, r->held_test, r->held_scope, flaky ? "FLAKY" : "PASS",
                                 NULL, flaky, NULL, flaky ? "" : NULL);
    if (rc == RT_OK) rc = rt_history_rows_add_attempts(r->rows, r->held_test, r->held);
    free(r->held_test);
    free(r->held_scope);
    r->held_test = r->held_scope = NULL;
    r->held = 0;
    return rc;
}

/* A pytest testcase of `test` (identity), with a run of empty testcases of no other test
 * held: an empty one is held (it may be a rerun: that shows when another of its test
 * follows); one with an outcome after held ones of its test is their last attempt, and
 * *reruns says how many failed before it. *held: it was held (test is then owned there). */
static int hold_pytest_case(reading *r, char **test, const char *scope, bool *held, int *reruns)
{
    *held = false;
    *reruns = 0;
    bool empty = r->outcome == NONE && !r->flaky_attempts && !r->rerun_attempts && !r->collection &&
                 !(r->status_attribute && *r->status_attribute);
    if (r->held_test && !empty) { /* the held ones were failed attempts before this one */
        *reruns = r->held;
        free(r->held_test);
        free(r->held_scope);
        r->held_test = r->held_scope = NULL;
        r->held = 0;
        return RT_OK;
    }
    if (!empty) return RT_OK;
    *held = true;
    if (r->held_test) {
        r->held++;
        return RT_OK;
    }
    if (!(r->held_scope = strdup(scope))) return RT_ENOMEM;
    r->held_test = *test;
    *test = NULL;
    r->held = 1;
    return RT_OK;
}

/* The testcase just read, into the rows. */
static int add_case(reading *r)
{
    int rc = RT_OK;
    char *test = NULL;
    const char *name = r->name, *classname = r->classname;
    r->stats->testcases++;
    if (r->stats->testcases > RT_JUNIT_MAX_CASES) {
        rt_set_errstr(r->errstr, "more than %d testcases", RT_JUNIT_MAX_CASES);
        rc = RT_ETOOBIG;
        goto out;
    }
    if (!name || !*name) {
        set_aside(r, "testcase without a name");
        goto out;
    }
    /* The scope: the classname, else the file, else the innermost suite's name. */
    const char *scope = classname && *classname && strcmp(classname, name) != 0 ? classname : NULL;
    if (!scope && r->file && *r->file) scope = r->file;
    for (int d = r->case_depth - 1; d >= 0 && !scope; d--)
        if (r->suites[d] && *r->suites[d]) scope = r->suites[d];
    size_t size = strlen(name) + (scope ? strlen(scope) : 0) + 3;
    if (size > RT_JUNIT_MAX_NAME) {
        char reason[80];
        snprintf(reason, sizeof reason, "testcase name longer than %d bytes", RT_JUNIT_MAX_NAME);
        set_aside(r, reason);
        goto out;
    }
    if (!(test = malloc(size))) {
        rc = RT_ENOMEM;
        goto out;
    }
    if (scope)
        snprintf(test, size, "%s::%s", scope, name);
    else
        snprintf(test, size, "%s", name);
    if (r->pytest) {
        int reruns = 0;
        bool held = false;
        /* a test of another identity ends what was held */
        if (r->held_test && strcmp(r->held_test, test) && (rc = add_held(r)) != RT_OK) goto out;
        rc = hold_pytest_case(r, &test, scope ? scope : "", &held, &reruns);
        if (rc != RT_OK || held) goto out;
        if (reruns > 0 && r->outcome >= ERRORED) r->rerun_attempts += reruns;
        if (reruns > 0 && r->outcome < ERRORED) r->flaky_attempts += reruns;
    }
    bool failed = false;
    const char *status = case_status(r, &failed);
    if (failed) r->stats->failures++;
    if (!strcmp(status, "SKIP")) r->stats->skipped++;
    bool with_message =
        failed || !strcmp(status, "COLLECTION_ERROR") || !strcmp(status, "BUILD_FAILED");
    rc = rt_history_rows_add_test(r->rows, test, scope ? scope : "", status, NULL, failed, NULL,
                                  with_message ? (r->message ? r->message : "") : NULL);
    if (rc == RT_OK)
        rc = rt_history_rows_add_attempts(r->rows, test, 1 + r->flaky_attempts + r->rerun_attempts);
out:
    free(test);
    forget_case(r);
    return rc;
}

/* An outcome child of a testcase opens: its kind, and its message when the case has none. */
static int open_outcome(reading *r, int depth, bool empty)
{
    int kind = NONE;
    bool flaky = named(r, "flakyFailure") || named(r, "flakyError");
    bool rerun = named(r, "rerunFailure") || named(r, "rerunError");
    if (named(r, "failure"))
        kind = FAILED;
    else if (named(r, "error"))
        kind = ERRORED;
    else if (named(r, "skipped"))
        kind = SKIPPED;
    else if (!flaky && !rerun)
        return RT_OK;
    if (flaky) r->flaky_attempts++;
    if (rerun) r->rerun_attempts++;
    if (kind > r->outcome) r->outcome = kind;
    if (kind == SKIPPED) return RT_OK;
    char *message = attribute(r, "message");
    if (kind == ERRORED && message && !strcmp(message, "collection failure")) r->collection = true;
    /* A failure's or an error's message stands over an attempt's, the first over later ones. */
    int rank = kind == NONE ? 1 : 2;
    if (!r->message || r->message_generic || rank > r->message_rank) {
        free(r->message);
        r->message = NULL;
        r->message_generic = false;
        r->message_rank = rank;
        if (message && message[strspn(message, " \t\r\n")]) {
            size_t n = strlen(message) < MAX_MESSAGE ? strlen(message) : MAX_MESSAGE;
            r->message = strndup(message, n);
            if (!r->message) {
                xmlFree(message);
                return RT_ENOMEM;
            }
            r->message_generic = generic_message(r->message);
        }
        if (!empty && (!r->message || r->message_generic)) r->failure_depth = depth;
    }
    xmlFree(message);
    return RT_OK;
}

/* An element opens (depth: its depth; empty: <x/>). */
static int open_element(reading *r, int depth, bool empty)
{
    if (depth == 0 && !named(r, "testsuites") && !named(r, "testsuite")) {
        const xmlChar *n = xmlTextReaderConstLocalName(r->reader);
        rt_set_errstr(r->errstr, "root element <%.64s> is not testsuites or testsuite",
                      n ? (const char *)n : "");
        return RT_EPROTO;
    }
    if (depth >= MAX_DEPTH) {
        rt_set_errstr(r->errstr, "elements nested deeper than %d", MAX_DEPTH);
        return RT_ETOOBIG;
    }
    if (r->case_depth >= 0) { /* inside a testcase */
        if (depth != r->case_depth + 1) return RT_OK;
        return open_outcome(r, depth, empty);
    }
    if (named(r, "testsuite") || named(r, "testsuites")) {
        if (depth <= 1) { /* pytest's root, or its default suite name (older pytest) */
            char *name = attribute(r, "name");
            if (name && (!strcmp(name, named(r, "testsuites") ? "pytest tests" : "pytest")))
                r->pytest = true;
            xmlFree(name);
        }
        if (!r->stats->timestamp[0]) {
            char *ts = attribute(r, "timestamp");
            if (ts) snprintf(r->stats->timestamp, sizeof r->stats->timestamp, "%s", ts);
            xmlFree(ts);
        }
        if (!empty) r->suites[depth] = attribute(r, "name");
        return RT_OK;
    }
    if (named(r, "testcase")) {
        r->name = attribute(r, "name");
        r->classname = attribute(r, "classname");
        r->file = attribute(r, "file");
        r->status_attribute = attribute(r, "status");
        r->case_depth = depth;
        xmlNodePtr node = xmlTextReaderCurrentNode(r->reader); /* the parser reads ahead */
        r->case_line = node ? xmlGetLineNo(node) : xmlTextReaderGetParserLineNumber(r->reader);
        return empty ? add_case(r) : RT_OK;
    }
    return RT_OK;
}

static int close_element(reading *r, int depth)
{
    if (r->case_depth >= 0 && depth == r->failure_depth) r->failure_depth = -1;
    if (r->case_depth >= 0 && depth == r->case_depth) return add_case(r);
    if (depth < MAX_DEPTH && r->suites[depth]) {
        xmlFree(r->suites[depth]);
        r->suites[depth] = NULL;
    }
    return RT_OK;
}

int rt_junit_add(const char *data, size_t len, rt_history_rows *rows, rt_junit_stats *stats,
                 char *errstr)
{
    if (len > (size_t)RT_JUNIT_MAX_BYTES) {
        rt_set_errstr(errstr, "larger than %ld bytes", RT_JUNIT_MAX_BYTES);
        return RT_ETOOBIG;
    }
    if (has_doctype(data, len)) {
        rt_set_errstr(errstr, "a DOCTYPE or markup declaration before the root element: JUnit "
                              "reports have none, and entities are refused");
        return RT_EPROTO;
    }
    reading r = {
        .rows = rows, .stats = stats, .errstr = errstr, .case_depth = -1, .failure_depth = -1};
    r.reader = xmlReaderForMemory(data, (int)len, "junit.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!r.reader) return RT_ENOMEM;
    xmlTextReaderSetStructuredErrorHandler(r.reader, on_error, &r);
    int rc = RT_OK, got, elements = 0;
    while (rc == RT_OK && (got = xmlTextReaderRead(r.reader)) == 1) {
        int type = xmlTextReaderNodeType(r.reader), depth = xmlTextReaderDepth(r.reader);
        if (type == XML_READER_TYPE_DOCUMENT_TYPE) { /* the byte scan missed it: still refused */
            rt_set_errstr(errstr, "a DOCTYPE: JUnit reports have none, and entities are refused");
            rc = RT_EPROTO;
        } else if (type == XML_READER_TYPE_ELEMENT) {
            elements++;
            rc = open_element(&r, depth, xmlTextReaderIsEmptyElement(r.reader) == 1);
        } else if (type == XML_READER_TYPE_END_ELEMENT) {
            rc = close_element(&r, depth);
        } else if ((type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA) &&
                   r.failure_depth >= 0 && depth == r.failure_depth + 1) {
            const xmlChar *text = xmlTextReaderConstValue(r.reader);
            if (text) rc = add_text(&r, (const char *)text);
        }
    }
    if (rc == RT_OK && got == 0 && !r.error[0]) rc = add_held(&r);
    if (rc == RT_OK && (got != 0 || r.error[0])) {
        rt_set_errstr(errstr, "line %d: %s", r.error_line,
                      r.error[0] ? r.error : "not well-formed XML");
        rc = RT_EPROTO;
    } else if (rc == RT_OK && elements == 0) {
        rt_set_errstr(errstr, "line 0: Document is empty");
        rc = RT_EPROTO;
    }
    forget_case(&r);
    free(r.held_test);
    free(r.held_scope);
    for (int d = 0; d < MAX_DEPTH; d++) xmlFree(r.suites[d]);
    xmlFreeTextReader(r.reader);
    return rc;
}
