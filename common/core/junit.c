/* SPDX-License-Identifier: MPL-2.0 */
/* junit.c - JUnit XML reports into test history rows, read as a stream with libxml2's
 * xmlTextReader. */
#include "common/core/junit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

#define MAX_DEPTH   256         /* nested elements */
#define MAX_MESSAGE (64 * 1024) /* bytes of a failure message kept */

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
    char *name, *classname, *message;
    const char *status;
    int failure_depth; /* the failure/error element whose text may be the message, or -1 */
    char error[200];   /* the parser's message for a document that is not well-formed */
    int error_line;
} reading;

static void on_error(void *context, xmlErrorPtr e)
{
    reading *r = context;
    if (r->error[0] || !e) return; /* the first error says most */
    snprintf(r->error, sizeof r->error, "%s", e->message ? e->message : "not well-formed XML");
    r->error[strcspn(r->error, "\n")] = '\0';
    r->error_line = e->line;
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
    free(r->message);
    r->name = r->classname = r->message = NULL;
    r->case_depth = r->failure_depth = -1;
}

/* The text of a failure element as its message, when it has no message attribute: its first
 * non-empty line. */
static int add_text(reading *r, const char *text)
{
    if (r->message) return RT_OK;
    const char *start = text + strspn(text, " \t\r\n");
    size_t n = strcspn(start, "\r\n");
    if (n == 0) return RT_OK;
    if (n > MAX_MESSAGE) n = MAX_MESSAGE;
    r->message = strndup(start, n);
    return r->message ? RT_OK : RT_ENOMEM;
}

/* The testcase just read, into the rows. */
static int add_case(reading *r)
{
    int rc = RT_OK;
    char *test = NULL;
    const char *name = r->name, *classname = r->classname;
    if (!name || !*name) {
        rt_set_errstr(r->errstr, "line %ld: testcase without a name", r->case_line);
        rc = RT_EPROTO;
        goto out;
    }
    size_t size = strlen(name) + (classname ? strlen(classname) : 0) + 3;
    if (size > RT_JUNIT_MAX_NAME) {
        rt_set_errstr(r->errstr, "line %ld: testcase name longer than %d bytes", r->case_line,
                      RT_JUNIT_MAX_NAME);
        rc = RT_ETOOBIG;
        goto out;
    }
    if (!(test = malloc(size))) {
        rc = RT_ENOMEM;
        goto out;
    }
    /* jest-junit repeats the name as classname: then the suite (the file) is the group. */
    bool own_class = classname && *classname && strcmp(classname, name) != 0;
    if (own_class)
        snprintf(test, size, "%s::%s", classname, name);
    else
        snprintf(test, size, "%s", name);
    const char *suite = NULL;
    for (int d = r->case_depth - 1; d >= 0 && !suite; d--) suite = r->suites[d];
    const char *group = own_class ? classname : suite ? suite : "";
    bool failed = !strcmp(r->status, "FAIL") || !strcmp(r->status, "ERROR");
    r->stats->testcases++;
    if (failed) r->stats->failures++;
    if (!strcmp(r->status, "SKIP")) r->stats->skipped++;
    if (r->stats->testcases > RT_JUNIT_MAX_CASES) {
        rt_set_errstr(r->errstr, "more than %d testcases", RT_JUNIT_MAX_CASES);
        rc = RT_ETOOBIG;
        goto out;
    }
    rc = rt_history_rows_add_test(r->rows, test, group, r->status, NULL, failed, NULL,
                                  failed ? (r->message ? r->message : "") : NULL);
out:
    free(test);
    forget_case(r);
    return rc;
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
        if (depth != r->case_depth + 1 || !strcmp(r->status, "FAIL") || !strcmp(r->status, "ERROR"))
            return RT_OK;
        if (named(r, "failure") || named(r, "error")) {
            r->status = named(r, "failure") ? "FAIL" : "ERROR";
            char *message = attribute(r, "message");
            if (message && *message) {
                size_t n = strlen(message) < MAX_MESSAGE ? strlen(message) : MAX_MESSAGE;
                r->message = strndup(message, n);
                if (!r->message) {
                    xmlFree(message);
                    return RT_ENOMEM;
                }
            } else if (!empty) {
                r->failure_depth = depth; /* its text is the message */
            }
            xmlFree(message);
        } else if (named(r, "skipped")) {
            r->status = "SKIP";
        }
        return RT_OK;
    }
    if (named(r, "testsuite") || named(r, "testsuites")) {
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
        r->status = "PASS";
        r->case_depth = depth;
        r->case_line = xmlTextReaderGetParserLineNumber(r->reader);
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
    reading r = {
        .rows = rows, .stats = stats, .errstr = errstr, .case_depth = -1, .failure_depth = -1};
    r.reader = xmlReaderForMemory(data, (int)len, "junit.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!r.reader) return RT_ENOMEM;
    xmlTextReaderSetStructuredErrorHandler(r.reader, on_error, &r);
    int rc = RT_OK, got, elements = 0;
    while (rc == RT_OK && (got = xmlTextReaderRead(r.reader)) == 1) {
        int type = xmlTextReaderNodeType(r.reader), depth = xmlTextReaderDepth(r.reader);
        if (type == XML_READER_TYPE_ELEMENT) {
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
    if (rc == RT_OK && (got != 0 || r.error[0])) {
        rt_set_errstr(errstr, "line %d: %s", r.error_line,
                      r.error[0] ? r.error : "not well-formed XML");
        rc = RT_EPROTO;
    } else if (rc == RT_OK && elements == 0) {
        rt_set_errstr(errstr, "line 0: Document is empty");
        rc = RT_EPROTO;
    }
    forget_case(&r);
    for (int d = 0; d < MAX_DEPTH; d++) xmlFree(r.suites[d]);
    xmlFreeTextReader(r.reader);
    return rc;
}
