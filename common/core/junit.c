/* SPDX-License-Identifier: MPL-2.0 */
/* junit.c - JUnit XML reports into test history rows, with libxml2. */
#include "common/core/junit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

static bool is_element(const xmlNode *node, const char *name)
{
    return node->type == XML_ELEMENT_NODE && !strcmp((const char *)node->name, name);
}

static char *prop(const xmlNode *node, const char *name)
{
    return (char *)xmlGetProp(node, (const xmlChar *)name);
}

/* The message of a failure/error element: its message attribute, else the first
 * non-empty line of its text. malloc'd via libxml (xmlFree), may be NULL. */
static char *failure_message(xmlNode *node)
{
    char *message = prop(node, "message");
    if (message && *message) return message;
    xmlFree(message);
    char *text = (char *)xmlNodeGetContent(node);
    if (!text) return NULL;
    char *start = text + strspn(text, " \t\r\n");
    size_t n = strcspn(start, "\r\n");
    memmove(text, start, n);
    text[n] = '\0';
    return text;
}

typedef struct walk {
    rt_history_rows *rows;
    rt_junit_stats *stats;
    char *errstr;
} walk;

static int add_case(walk *w, xmlNode *tc, const char *suite)
{
    int rc = RT_OK;
    char *name = prop(tc, "name"), *classname = prop(tc, "classname");
    char *message = NULL, *test = NULL;
    const char *status = "PASS";
    if (!name || !*name) {
        rt_set_errstr(w->errstr, "line %ld: testcase without a name", (long)xmlGetLineNo(tc));
        rc = RT_EPROTO;
        goto out;
    }
    for (xmlNode *c = tc->children; c; c = c->next) {
        if (is_element(c, "failure") || is_element(c, "error")) {
            status = is_element(c, "failure") ? "FAIL" : "ERROR";
            message = failure_message(c);
            break;
        }
        if (is_element(c, "skipped")) status = "SKIP";
    }
    size_t size = strlen(name) + (classname ? strlen(classname) : 0) + 3;
    if (size > RT_JUNIT_MAX_NAME) {
        rt_set_errstr(w->errstr, "line %ld: testcase name longer than %d bytes",
                      (long)xmlGetLineNo(tc), RT_JUNIT_MAX_NAME);
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
    const char *group = own_class ? classname : suite ? suite : "";
    bool failed = !strcmp(status, "FAIL") || !strcmp(status, "ERROR");
    w->stats->testcases++;
    if (failed) w->stats->failures++;
    if (!strcmp(status, "SKIP")) w->stats->skipped++;
    if (w->stats->testcases > RT_JUNIT_MAX_CASES) {
        rt_set_errstr(w->errstr, "more than %d testcases", RT_JUNIT_MAX_CASES);
        rc = RT_ETOOBIG;
        goto out;
    }
    rc = rt_history_rows_add_test(w->rows, test, group, status, NULL, failed, NULL,
                                  failed ? (message ? message : "") : NULL);
out:
    xmlFree(name);
    xmlFree(classname);
    xmlFree(message);
    free(test);
    return rc;
}

static int add_suite(walk *w, xmlNode *suite)
{
    if (!w->stats->timestamp[0]) {
        char *ts = prop(suite, "timestamp");
        if (ts) snprintf(w->stats->timestamp, sizeof w->stats->timestamp, "%s", ts);
        xmlFree(ts);
    }
    int rc = RT_OK;
    char *name = prop(suite, "name");
    for (xmlNode *c = suite->children; c && rc == RT_OK; c = c->next) {
        if (is_element(c, "testcase"))
            rc = add_case(w, c, name);
        else if (is_element(c, "testsuite") || is_element(c, "testsuites"))
            rc = add_suite(w, c);
    }
    xmlFree(name);
    return rc;
}

int rt_junit_add(const char *data, size_t len, rt_history_rows *rows, rt_junit_stats *stats,
                 char *errstr)
{
    if (len > (size_t)RT_JUNIT_MAX_BYTES) {
        rt_set_errstr(errstr, "larger than %ld bytes", RT_JUNIT_MAX_BYTES);
        return RT_ETOOBIG;
    }
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) return RT_ENOMEM;
    int rc = RT_OK;
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, data, (int)len, "junit.xml", NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc || !ctxt->wellFormed) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char message[160] = "not well-formed XML";
        if (e && e->message) {
            snprintf(message, sizeof message, "%s", e->message);
            message[strcspn(message, "\n")] = '\0';
        }
        rt_set_errstr(errstr, "line %d: %s", e ? e->line : 0, message);
        rc = RT_EPROTO;
        goto out;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !(is_element(root, "testsuites") || is_element(root, "testsuite"))) {
        rt_set_errstr(errstr, "root element <%s> is not testsuites or testsuite",
                      root ? (const char *)root->name : "");
        rc = RT_EPROTO;
        goto out;
    }
    walk w = {rows, stats, errstr};
    rc = add_suite(&w, root);
out:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return rc;
}
