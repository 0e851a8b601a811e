/* SPDX-License-Identifier: MPL-2.0 */
/* issue_tracker.h - where retrig flaky-issues files its issues, behind one small vtable:
 * GitHub Issues of a repository (common/io/github_client.h) or Bugzilla's REST API
 * (common/io/http.h). The texts and payloads come from common/core/flaky_issue.h.
 *
 * GitHub: find lists the issues with flaky_issue_label once (every state, all pages) and
 * matches the hidden marker on each body's first line (the listing is consistent at once,
 * unlike search, so an issue created just before a crash is found); create POSTs the
 * issue; update edits the one figures comment (creating it the first time); close
 * comments then closes; reopen reopens then comments.
 * Bugzilla: find searches the whiteboard for "[<marker>]"; create POSTs /rest/bug (product
 * and component from bugzilla_components, keywords bugzilla_keywords); Bugzilla comments
 * cannot be edited, so update adds a comment (retrig updates only when figures changed);
 * close resolves the bug WORKSFORME with a comment, reopen sets REOPENED with a comment.
 * Not thread-safe: one tracker per thread. */
#ifndef RETRIG_COMMON_ISSUE_TRACKER_H
#define RETRIG_COMMON_ISSUE_TRACKER_H

#include "common/not_core.h"

#include <stdbool.h>

#include "common/config.h"
#include "common/core/errors.h"

typedef struct rt_tracker_issue {
    long long number; /* issue number or bug id */
    char url[512];
    bool open;
    long long comment_id; /* the figures comment (GitHub), 0 when none yet */
} rt_tracker_issue;

typedef struct rt_tracker rt_tracker;

typedef struct rt_tracker_ops {
    const char *name; /* "github", "bugzilla" */
    /* The issue carrying marker: RT_OK, RT_ENOTFOUND, or an error. */
    int (*find)(rt_tracker *t, const char *marker, rt_tracker_issue *out);
    int (*create)(rt_tracker *t, const char *test, const char *title, const char *body,
                  const char *marker, rt_tracker_issue *out);
    int (*update)(rt_tracker *t, rt_tracker_issue *issue, const char *comment);
    int (*close)(rt_tracker *t, rt_tracker_issue *issue, const char *comment);
    int (*reopen)(rt_tracker *t, rt_tracker_issue *issue, const char *comment);
    void (*free)(rt_tracker *t);
} rt_tracker_ops;

struct rt_tracker {
    const rt_tracker_ops *ops;
    char errstr[RT_ERRSTR_SIZE];
};

/* GitHub Issues of repo (OWNER/NAME) with token (issues: write). */
RT_MUSTCHECK int rt_tracker_github_new(rt_tracker **out, const rt_config *cfg, const char *repo,
                                       const char *token, char *errstr);
/* Bugzilla at cfg->bugzilla_url with cfg->bugzilla_api_key. */
RT_MUSTCHECK int rt_tracker_bugzilla_new(rt_tracker **out, const rt_config *cfg, char *errstr);
/* NULL is a no-op. */
void rt_tracker_free(rt_tracker *t);

#endif
