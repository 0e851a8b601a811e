# SPDX-License-Identifier: MPL-2.0
# github_fake.py - the GitHub REST API (Actions runs, attempts, artifacts, issues, comments)
# and Bugzilla's REST API as fake_upstream.py serves them: pagination with Link, ETags and
# 304s, rate-limit headers that count down to 0 and reset, artifact downloads that redirect
# to a storage path refusing any Authorization header, expired artifacts. Standard library
# only. See README.md ("GitHub and Bugzilla") for the scenario format.
import base64
import calendar
import copy
import hashlib
import io
import json
import os
import threading
import time
import urllib.parse
import zipfile

API_VERSION_DATE = "2022-11-28"
DEFAULT_PAGE = 30
MAX_PAGE = 100


class Answer(Exception):
    """An answer other than 200 that a handler decides on."""

    def __init__(self, status, body, headers=None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def parse_iso(text):
    return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))


def gh_error(status, message):
    return Answer(status, {"message": message,
                           "documentation_url": "https://docs.github.com/rest"})


class GitHubFake:
    """GitHub and Bugzilla data, with their own lock."""

    def __init__(self):
        self.lock = threading.RLock()
        self.repos = {}  # full name -> {"default_branch"}
        self.runs = {}  # (repo, id) -> run spec (attempts inside)
        self.artifacts = {}  # id -> {"repo", "run", "attempt", "name", "files", "expired", ...}
        self.zips = {}  # artifact id -> bytes
        self.issues = {}  # repo -> {number: issue}
        self.comments = {}  # comment id -> comment (with repo and issue number)
        self.next_issue = {}
        self.next_comment = 9000001
        self.bugs = {}
        self.next_bug = 1900001
        self.page_size = MAX_PAGE
        self.token = None
        self.bugzilla_api_key = None
        self.rate = None  # {"limit", "remaining", "reset_s", "reset"}
        self.renamed = {}  # old full name -> new full name (answered 301 as GitHub does)
        self.listing_cap = 1000  # runs a filtered listing serves at most (GitHub: 1,000)
        self.pulls = {}  # repo -> [pull request spec]

    # ---- scenario ---------------------------------------------------------------------
    def load(self, spec):
        known = {"repos", "runs", "page_size", "rate_limit", "issues", "token",
                 "bugzilla_api_key", "bugs", "renamed", "listing_cap", "pulls"}
        unknown = set(spec) - known
        if unknown:
            raise ValueError("unknown github scenario keys: %s" % ", ".join(sorted(unknown)))
        with self.lock:
            for name, repo in spec.get("repos", {}).items():
                self.repos[name] = dict(repo)
            for run in spec.get("runs", []):
                self.add_run(run)
            for pull in spec.get("pulls", []):
                self.add_pull(pull)
            for old, new in spec.get("renamed", {}).items():
                self.renamed[old] = new
            if "listing_cap" in spec:
                self.listing_cap = max(1, int(spec["listing_cap"]))
            if "page_size" in spec:
                self.page_size = max(1, min(MAX_PAGE, int(spec["page_size"])))
            if "token" in spec:
                self.token = spec["token"]
            if "bugzilla_api_key" in spec:
                self.bugzilla_api_key = spec["bugzilla_api_key"]
            if "rate_limit" in spec:
                r = spec["rate_limit"]
                self.rate = {"limit": int(r.get("limit", 5000)),
                             "remaining": int(r.get("remaining", r.get("limit", 5000))),
                             "reset_s": float(r.get("reset_s", 3600)),
                             "reset": time.time() + float(r.get("reset_s", 3600))}
            for issue in spec.get("issues", []):
                self.create_issue(issue["repo"], issue)
            for bug in spec.get("bugs", []):
                self.create_bug(bug)

    def add_run(self, run):
        repo = run["repo"]
        self.repos.setdefault(repo, {"default_branch": "main"})
        run = copy.deepcopy(run)
        run.setdefault("workflow_id", 1001)
        run.setdefault("path", ".github/workflows/tests.yaml")
        run.setdefault("name", "Tests")
        run.setdefault("event", "pull_request" if run.get("pull_requests") else "push")
        run.setdefault("head_repository", repo)
        run.setdefault("pull_requests", [])
        run.setdefault("status", "completed")
        created = parse_iso(run["created_at"])
        attempts = run.get("attempts") or [{}]
        for n, attempt in enumerate(attempts, 1):
            attempt.setdefault("conclusion", "success")
            attempt.setdefault("run_started_at", iso(created + (n - 1) * 3600))
            started = parse_iso(attempt["run_started_at"])
            for k, art in enumerate(attempt.get("artifacts", [])):
                art_id = int(art.get("id", run["id"] * 100 + n * 10 + k))
                art["id"] = art_id
                self.artifacts[art_id] = {
                    "repo": repo, "run": run["id"], "attempt": n, "name": art["name"],
                    "files": art.get("files", {}), "raw": art.get("raw"),
                    "expired": bool(art.get("expired", False)),
                    "created_at": art.get("created_at", iso(started + 300)),
                    "head_branch": run["head_branch"], "head_sha": run["head_sha"]}
                self.zips.pop(art_id, None)
        run["attempts"] = attempts
        self.runs[(repo, int(run["id"]))] = run

    def add_pull(self, pull):
        pull = dict(pull)
        repo = pull["repo"]
        self.repos.setdefault(repo, {"default_branch": "main"})
        pull.setdefault("head_repository", repo)
        pull.setdefault("state", "open")
        pull.setdefault("merged", False)
        pull.setdefault("author_association", "CONTRIBUTOR")
        pull.setdefault("user", pull["head_repository"].split("/")[0])
        pull.setdefault("created_at", "2024-05-01T09:00:00Z")
        pull["number"] = int(pull["number"])
        self.pulls.setdefault(repo, []).append(pull)

    # ---- shapes -----------------------------------------------------------------------
    def pull_view(self, base, p):
        """A pull request as GitHub's "List pull requests" documents it (the fields of a
        pull request simple that matter here, and a few around them)."""
        repo, head = p["repo"], p["head_repository"]
        closed = p["state"] == "closed"
        closed_at = p.get("closed_at", p["created_at"]) if closed else None

        def repo_view(name):
            return {"id": self.repo_id(name) if name in self.repos else 2000 + len(name),
                    "name": name.split("/")[1], "full_name": name,
                    "owner": {"login": name.split("/")[0]}, "fork": name != repo,
                    "url": "%s/repos/%s" % (base, name)}

        return {
            "url": "%s/repos/%s/pulls/%d" % (base, repo, p["number"]),
            "id": 700000 + p["number"], "node_id": "PR_%d" % p["number"],
            "html_url": "https://github.com/%s/pull/%d" % (repo, p["number"]),
            "number": p["number"], "state": p["state"], "locked": False,
            "title": p.get("title", p["head_branch"]),
            "user": {"login": p["user"], "id": 1, "type": "User"},
            "body": p.get("body"), "created_at": p["created_at"],
            "updated_at": closed_at or p["created_at"], "closed_at": closed_at,
            "merged_at": closed_at if p["merged"] else None,
            "merge_commit_sha": "f" * 40 if p["merged"] else None, "draft": False,
            "head": {"label": "%s:%s" % (head.split("/")[0], p["head_branch"]),
                     "ref": p["head_branch"], "sha": p["head_sha"],
                     "user": {"login": head.split("/")[0]}, "repo": repo_view(head)},
            "base": {"label": "%s:%s" % (repo.split("/")[0],
                                         self.repos[repo].get("default_branch", "main")),
                     "ref": self.repos[repo].get("default_branch", "main"), "sha": "0" * 40,
                     "user": {"login": repo.split("/")[0]}, "repo": repo_view(repo)},
            "author_association": p["author_association"],
        }

    def list_pulls(self, base, path, query, repo):
        """GET /repos/{o}/{r}/pulls: state open (default), closed (merged too) or all;
        head=USER:REF (the head repository's owner and branch), newest first."""
        state = query.get("state", ["open"])[0]
        head = query.get("head", [None])[0]
        pulls = [p for p in self.pulls.get(repo, []) if state == "all" or p["state"] == state]
        if head is not None:
            user, _, ref = head.partition(":")
            pulls = [p for p in pulls
                     if p["head_repository"].split("/")[0].lower() == user.lower()
                     and (not ref or p["head_branch"] == ref)]
        pulls.sort(key=lambda p: (p["created_at"], p["number"]), reverse=True)
        chunk, headers = self.page(base, path, query, [self.pull_view(base, p) for p in pulls])
        return 200, chunk, headers

    def commit_pulls(self, base, path, query, repo, sha):
        """GET /repos/{o}/{r}/commits/{sha}/pulls: the pull requests whose head is the commit."""
        pulls = [p for p in self.pulls.get(repo, []) if p["head_sha"] == sha]
        pulls.sort(key=lambda p: (p["created_at"], p["number"]), reverse=True)
        chunk, headers = self.page(base, path, query, [self.pull_view(base, p) for p in pulls])
        return 200, chunk, headers

    def run_view(self, base, run, attempt_no=None):
        attempts = run["attempts"]
        n = attempt_no or len(attempts)
        attempt = attempts[n - 1]
        repo = run["repo"]
        owner = repo.split("/")[0]
        head = run["head_repository"]
        prs = [{"id": 500000 + p, "number": p,
                "url": "%s/repos/%s/pulls/%d" % (base, repo, p),
                "head": {"ref": run["head_branch"], "sha": run["head_sha"],
                         "repo": {"id": 1, "url": "%s/repos/%s" % (base, head), "name": head.split("/")[1]}},
                "base": {"ref": self.repos[repo].get("default_branch", "main"), "sha": "0" * 40,
                         "repo": {"id": 1, "url": "%s/repos/%s" % (base, repo), "name": repo.split("/")[1]}}}
               for p in run["pull_requests"]]
        return {
            "id": run["id"], "name": run["name"], "node_id": "WFR_%d" % run["id"],
            "head_branch": run["head_branch"], "head_sha": run["head_sha"],
            "path": run["path"], "display_title": run.get("title", run["head_branch"]),
            "run_number": run.get("run_number", run["id"] % 100000), "event": run["event"],
            "status": run["status"], "conclusion": attempt["conclusion"],
            "workflow_id": run["workflow_id"], "check_suite_id": run["id"] + 7,
            "url": "%s/repos/%s/actions/runs/%d" % (base, repo, run["id"]),
            "html_url": "https://github.com/%s/actions/runs/%d" % (repo, run["id"]),
            "pull_requests": prs, "created_at": run["created_at"],
            "updated_at": attempt["run_started_at"], "run_attempt": n,
            "run_started_at": attempt["run_started_at"],
            "actor": {"login": owner}, "triggering_actor": {"login": owner},
            "jobs_url": "%s/repos/%s/actions/runs/%d/jobs" % (base, repo, run["id"]),
            "artifacts_url": "%s/repos/%s/actions/runs/%d/artifacts" % (base, repo, run["id"]),
            "head_commit": {"id": run["head_sha"], "message": run.get("title", "commit")},
            "repository": {"id": 1, "name": repo.split("/")[1], "full_name": repo},
            "head_repository": {"id": 1 if head == repo else 2, "name": head.split("/")[1],
                                "full_name": head},
        }

    def artifact_zip(self, art_id):
        data = self.zips.get(art_id)
        if data is None:
            art = self.artifacts[art_id]
            if art.get("raw") is not None:
                data = base64.b64decode(art["raw"])
            else:
                buf = io.BytesIO()
                with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                    for name, text in sorted(art["files"].items()):
                        z.writestr(name, text)
                data = buf.getvalue()
            self.zips[art_id] = data
        return data

    def artifact_view(self, base, art_id):
        art = self.artifacts[art_id]
        size = 0 if art["expired"] else len(self.artifact_zip(art_id))
        created = art["created_at"]
        return {"id": art_id, "node_id": "MDg6QXJ0aWZhY3Q%d" % art_id, "name": art["name"],
                "size_in_bytes": size,
                "url": "%s/repos/%s/actions/artifacts/%d" % (base, art["repo"], art_id),
                "archive_download_url": "%s/repos/%s/actions/artifacts/%d/zip" % (
                    base, art["repo"], art_id),
                "expired": art["expired"], "created_at": created, "updated_at": created,
                "expires_at": iso(parse_iso(created) + 90 * 86400),
                "workflow_run": {"id": art["run"], "repository_id": 1, "head_repository_id": 1,
                                 "head_branch": art["head_branch"], "head_sha": art["head_sha"]}}

    # ---- issues and bugs --------------------------------------------------------------
    def create_issue(self, repo, fields):
        with self.lock:
            number = self.next_issue.get(repo, 1)
            self.next_issue[repo] = number + 1
            labels = [lb if isinstance(lb, str) else lb.get("name") for lb in fields.get("labels", [])]
            now = iso(time.time())
            issue = {"id": 7000000 + number, "number": number, "title": fields["title"],
                     "body": fields.get("body"), "state": fields.get("state", "open"),
                     "state_reason": None, "labels": [{"name": lb} for lb in labels],
                     "html_url": "https://github.com/%s/issues/%d" % (repo, number),
                     "created_at": now, "updated_at": now, "closed_at": None, "comments": 0,
                     "user": {"login": "retrig-bot"}}
            self.issues.setdefault(repo, {})[number] = issue
            return copy.deepcopy(issue)

    def create_bug(self, fields):
        with self.lock:
            bug_id = self.next_bug
            self.next_bug += 1
            bug = {"id": bug_id, "product": fields["product"], "component": fields["component"],
                   "summary": fields["summary"], "version": fields.get("version", "unspecified"),
                   "type": fields.get("type", "defect"), "keywords": list(fields.get("keywords", [])),
                   "whiteboard": fields.get("whiteboard", ""), "status": "NEW", "resolution": "",
                   "comments": [{"text": fields.get("description", ""), "count": 0}]}
            self.bugs[bug_id] = bug
            return bug

    # ---- routing ----------------------------------------------------------------------
    def route(self, handler, method, path, query, body):
        base = handler.base_url()
        try:
            if path.startswith("/storage/"):
                return self.storage(handler, path)
            if path.startswith("/rest/"):
                return self.bugzilla(handler, method, path, query, body)
            if path.startswith("/repositories/"):
                seg = path.split("/")
                if len(seg) < 3 or not seg[2].isdigit():
                    raise gh_error(404, "Not Found")
                with self.lock:
                    repo = self.repo_of_id(int(seg[2]))
                if repo is None:
                    raise gh_error(404, "Not Found")
                return self.api(handler, base, method, path, query, body, repo, seg[3:])
            return self.api(handler, base, method, path, query, body)
        except Answer as a:
            return a.status, a.body, a.headers

    def storage(self, handler, path):
        # an Azure-like blob store: a signed URL, and any Authorization header is refused
        if handler.headers.get("Authorization") is not None:
            raise Answer(400, "<?xml version=\"1.0\"?><Error><Code>InvalidAuthenticationInfo"
                              "</Code><Message>Authentication information is not given in the "
                              "correct format.</Message></Error>",
                         {"Content-Type": "application/xml"})
        name = path.rsplit("/", 1)[-1]
        try:
            art_id = int(name.split(".")[0])
        except ValueError:
            raise Answer(404, "<Error><Code>BlobNotFound</Code></Error>")
        with self.lock:
            if art_id not in self.artifacts:
                raise Answer(404, "<Error><Code>BlobNotFound</Code></Error>")
            data = self.artifact_zip(art_id)
        return 200, data, {"Content-Type": "application/zip"}

    def rate_headers(self):
        r = self.rate
        if r is None:
            return {}
        return {"x-ratelimit-limit": str(r["limit"]), "x-ratelimit-remaining": str(r["remaining"]),
                "x-ratelimit-reset": str(int(r["reset"])),
                "x-ratelimit-used": str(r["limit"] - r["remaining"]),
                "x-ratelimit-resource": "core"}

    def spend(self):
        """Counts one request against the rate limit; raises 403 when none is left."""
        r = self.rate
        if r is None:
            return
        now = time.time()
        if now >= r["reset"]:
            r["remaining"] = r["limit"]
            r["reset"] = now + r["reset_s"]
        if r["remaining"] <= 0:
            raise Answer(403, {"message": "API rate limit exceeded for installation. Check out "
                                          "the documentation for more details.",
                               "documentation_url": "https://docs.github.com/rest/overview/"
                                                    "rate-limits-for-the-rest-api"},
                         self.rate_headers())
        r["remaining"] -= 1

    def repo_id(self, name):
        names = sorted(self.repos)
        return int(self.repos[name].get("id", 1000 + names.index(name)))

    def repo_of_id(self, repo_id):
        for name in self.repos:
            if self.repo_id(name) == repo_id:
                return name
        return None

    def moved(self, base, path, query):
        """A renamed repository's old path: 301 to /repositories/{id}/..., as GitHub does."""
        seg = path.split("/")
        if len(seg) < 4 or seg[1] != "repos":
            return None
        old = "%s/%s" % (urllib.parse.unquote(seg[2]), urllib.parse.unquote(seg[3]))
        new = self.renamed.get(old)
        if new is None or new not in self.repos:
            return None
        rest = "/".join(seg[4:])
        location = "%s/repositories/%d%s" % (base, self.repo_id(new), "/" + rest if rest else "")
        if query:
            location += "?" + urllib.parse.urlencode({k: v[0] for k, v in query.items()})
        return Answer(301, {"message": "Moved Permanently", "url": location,
                            "documentation_url": "https://docs.github.com/rest/guides/"
                                                 "best-practices-for-using-the-rest-api"
                                                 "#follow-redirects"},
                      {"Location": location})

    def api(self, handler, base, method, path, query, body, repo=None, rest=None):
        with self.lock:
            if self.token is not None:
                auth = handler.headers.get("Authorization") or ""
                if auth != "Bearer " + self.token:
                    raise gh_error(401, "Bad credentials")
            try:
                self.spend()
            except Answer as a:
                raise a
            moved = self.moved(base, path, query) if repo is None else None
            if moved is not None:
                moved.headers.update(self.rate_headers())
                raise moved
            status, payload, headers = self.api_route(base, method, path, query, body, repo, rest)
            headers = dict(headers or {})
            headers.update(self.rate_headers())
            headers["X-GitHub-Api-Version-Selected"] = API_VERSION_DATE
            if method == "GET" and status == 200:
                data = json.dumps(payload).encode()
                etag = 'W/"%s"' % hashlib.sha256(data).hexdigest()
                headers["ETag"] = etag
                if handler.headers.get("If-None-Match") == etag:
                    if self.rate is not None:  # a 304 costs nothing
                        self.rate["remaining"] += 1
                        headers.update(self.rate_headers())
                    return 304, b"", headers
                return 200, data, dict(headers, **{"Content-Type": "application/json; charset=utf-8"})
            return status, payload, headers

    def page(self, base, path, query, items):
        try:
            per_page = int(query.get("per_page", [DEFAULT_PAGE])[0])
            page = int(query.get("page", ["1"])[0])
        except ValueError:
            raise gh_error(400, "per_page and page must be integers")
        per_page = max(1, min(per_page, self.page_size))
        page = max(1, page)
        last = max(1, (len(items) + per_page - 1) // per_page)
        chunk = items[(page - 1) * per_page: page * per_page]

        def url(n):
            q = {k: v[0] for k, v in query.items()}
            q["page"] = str(n)
            return "%s%s?%s" % (base, path, urllib.parse.urlencode(q))

        links = []
        if page < last:
            links.append('<%s>; rel="next"' % url(page + 1))
            links.append('<%s>; rel="last"' % url(last))
        if page > 1:
            links.append('<%s>; rel="first"' % url(1))
            links.append('<%s>; rel="prev"' % url(page - 1))
        return chunk, ({"Link": ", ".join(links)} if links else {})

    def api_route(self, base, method, path, query, body, repo=None, rest=None):
        if repo is None:  # /repos/{owner}/{name}/... (else /repositories/{id}/...)
            seg = [urllib.parse.unquote(s) for s in path.split("/")[1:]]
            if seg[0] != "repos" or len(seg) < 3:
                raise gh_error(404, "Not Found")
            repo = "%s/%s" % (seg[1], seg[2])
            rest = seg[3:]
        else:
            rest = [urllib.parse.unquote(s) for s in rest if s != ""]
            seg = ["repositories", "", repo.split("/")[1]]
        if repo not in self.repos:
            raise gh_error(404, "Not Found")
        if not rest and method == "GET":
            return 200, {"id": 1, "name": seg[2], "full_name": repo,
                         "default_branch": self.repos[repo].get("default_branch", "main"),
                         "private": False}, None
        if rest[:2] == ["actions", "runs"] and len(rest) == 2 and method == "GET":
            return self.list_runs(base, path, query, repo, None)
        if rest[:2] == ["actions", "workflows"] and len(rest) == 4 and rest[3] == "runs":
            return self.list_runs(base, path, query, repo, rest[2])
        if rest[:2] == ["actions", "runs"] and len(rest) >= 3 and method == "GET":
            run = self.runs.get((repo, int(rest[2]) if rest[2].isdigit() else -1))
            if run is None:
                raise gh_error(404, "Not Found")
            if len(rest) == 3:
                return 200, self.run_view(base, run), None
            if len(rest) == 5 and rest[3] == "attempts" and rest[4].isdigit():
                n = int(rest[4])
                if not 1 <= n <= len(run["attempts"]):
                    raise gh_error(404, "Not Found")
                return 200, self.run_view(base, run, n), None
            if len(rest) == 4 and rest[3] == "artifacts":
                ids = sorted(a for a, v in self.artifacts.items()
                             if v["repo"] == repo and v["run"] == run["id"])
                name = query.get("name", [None])[0]
                views = [self.artifact_view(base, a) for a in ids
                         if name is None or self.artifacts[a]["name"] == name]
                chunk, headers = self.page(base, path, query, views)
                return 200, {"total_count": len(views), "artifacts": chunk}, headers
        if rest[:2] == ["actions", "artifacts"] and len(rest) == 4 and rest[3] == "zip":
            art = self.artifacts.get(int(rest[2]) if rest[2].isdigit() else -1)
            if art is None or art["repo"] != repo:
                raise gh_error(404, "Not Found")
            if art["expired"]:
                raise gh_error(410, "Artifact has expired")
            signature = hashlib.sha256(os.urandom(16)).hexdigest()[:32]
            location = "%s/storage/artifacts/%s.zip?sv=2021-08-06&se=%s&sig=%s" % (
                base, rest[2], urllib.parse.quote(iso(time.time() + 60)), signature)
            return 302, b"", {"Location": location}
        if rest == ["pulls"] and method == "GET":
            return self.list_pulls(base, path, query, repo)
        if len(rest) == 3 and rest[0] == "commits" and rest[2] == "pulls" and method == "GET":
            return self.commit_pulls(base, path, query, repo, rest[1])
        if rest == ["issues"]:
            return self.issues_root(base, path, method, query, body, repo)
        if len(rest) == 2 and rest[0] == "issues" and rest[1].isdigit():
            return self.issue_one(method, body, repo, int(rest[1]))
        if len(rest) == 3 and rest[0] == "issues" and rest[1].isdigit() and rest[2] == "comments":
            return self.issue_comments(base, path, method, query, body, repo, int(rest[1]))
        if len(rest) == 3 and rest[:2] == ["issues", "comments"] and rest[2].isdigit():
            return self.comment_one(method, body, repo, int(rest[2]))
        raise gh_error(404, "Not Found")

    def list_runs(self, base, path, query, repo, workflow):
        runs = [r for (rp, _), r in self.runs.items() if rp == repo]
        if workflow:
            runs = [r for r in runs if r["path"].endswith("/" + workflow) or str(r["workflow_id"]) == workflow]
        status = query.get("status", [None])[0]
        if status:
            runs = [r for r in runs if r["status"] == status or
                    r["attempts"][-1]["conclusion"] == status]
        created = query.get("created", [None])[0]
        filtered = bool(status or created)
        if created:
            def when(text, end):
                if len(text) == 10:
                    return parse_iso(text + "T00:00:00Z") + (86399 if end else 0)
                return parse_iso(text)
            if created.startswith(">="):
                low, high = when(created[2:], False), None
            elif ".." in created:
                a, b = created.split("..", 1)
                low, high = when(a, False), when(b, True)
            else:
                raise gh_error(422, "the fake knows created=>=DATE and created=A..B only")
            runs = [r for r in runs if parse_iso(r["created_at"]) >= low and
                    (high is None or parse_iso(r["created_at"]) <= high)]
        for key in ("branch", "event", "head_sha"):
            value = query.get(key, [None])[0]
            if value:
                filtered = True
                field = {"branch": "head_branch"}.get(key, key)
                runs = [r for r in runs if r[field] == value]
        runs.sort(key=lambda r: (parse_iso(r["created_at"]), r["id"]), reverse=True)
        total = len(runs)
        if filtered:  # GitHub serves at most 1,000 runs of a filtered listing, silently
            runs = runs[:self.listing_cap]
        views = [self.run_view(base, r) for r in runs]
        chunk, headers = self.page(base, path, query, views)
        return 200, {"total_count": total, "workflow_runs": chunk}, headers

    def issues_root(self, base, path, method, query, body, repo):
        if method == "POST":
            data = json.loads(body or b"{}")
            if not isinstance(data, dict) or not isinstance(data.get("title"), str):
                raise gh_error(422, "Validation Failed: title is missing")
            return 201, self.create_issue(repo, data), None
        if method != "GET":
            raise gh_error(404, "Not Found")
        issues = list(self.issues.get(repo, {}).values())
        state = query.get("state", ["open"])[0]
        if state != "all":
            issues = [i for i in issues if i["state"] == state]
        labels = query.get("labels", [None])[0]
        if labels:
            wanted = set(labels.split(","))
            issues = [i for i in issues if wanted <= {lb["name"] for lb in i["labels"]}]
        issues.sort(key=lambda i: -i["number"])
        chunk, headers = self.page(base, path, query, [copy.deepcopy(i) for i in issues])
        return 200, chunk, headers

    def issue_one(self, method, body, repo, number):
        issue = self.issues.get(repo, {}).get(number)
        if issue is None:
            raise gh_error(404, "Not Found")
        if method == "PATCH":
            data = json.loads(body or b"{}")
            for key in ("title", "body", "state", "state_reason"):
                if key in data:
                    issue[key] = data[key]
            if "labels" in data:
                issue["labels"] = [{"name": lb} for lb in data["labels"]]
            if data.get("state") == "closed":
                issue["closed_at"] = iso(time.time())
            elif data.get("state") == "open":
                issue["closed_at"] = None
            issue["updated_at"] = iso(time.time())
        elif method != "GET":
            raise gh_error(404, "Not Found")
        return 200, copy.deepcopy(issue), None

    def issue_comments(self, base, path, method, query, body, repo, number):
        issue = self.issues.get(repo, {}).get(number)
        if issue is None:
            raise gh_error(404, "Not Found")
        if method == "POST":
            data = json.loads(body or b"{}")
            if not isinstance(data.get("body"), str):
                raise gh_error(422, "Validation Failed: body is missing")
            cid = self.next_comment
            self.next_comment += 1
            now = iso(time.time())
            comment = {"id": cid, "body": data["body"], "repo": repo, "issue": number,
                       "html_url": "%s#issuecomment-%d" % (issue["html_url"], cid),
                       "created_at": now, "updated_at": now}
            self.comments[cid] = comment
            issue["comments"] += 1
            return 201, {k: v for k, v in comment.items() if k not in ("repo", "issue")}, None
        mine = [c for c in self.comments.values() if c["repo"] == repo and c["issue"] == number]
        chunk, headers = self.page(base, path, query, [
            {k: v for k, v in c.items() if k not in ("repo", "issue")} for c in mine])
        return 200, chunk, headers

    def comment_one(self, method, body, repo, cid):
        comment = self.comments.get(cid)
        if comment is None or comment["repo"] != repo:
            raise gh_error(404, "Not Found")
        if method == "PATCH":
            data = json.loads(body or b"{}")
            comment["body"] = data.get("body", comment["body"])
            comment["updated_at"] = iso(time.time())
        return 200, {k: v for k, v in comment.items() if k not in ("repo", "issue")}, None

    def bugzilla(self, handler, method, path, query, body):
        with self.lock:
            if self.bugzilla_api_key is not None and \
                    handler.headers.get("X-BUGZILLA-API-KEY") != self.bugzilla_api_key:
                raise Answer(401, {"error": True, "code": 306,
                                   "message": "The API key you specified is invalid."})
            seg = path.split("/")[2:]
            if seg == ["bug"] and method == "POST":
                data = json.loads(body or b"{}")
                for key in ("product", "component", "summary", "version"):
                    if not data.get(key):
                        raise Answer(400, {"error": True, "code": 32614,
                                           "message": "You must enter a %s." % key})
                return 200, {"id": self.create_bug(data)["id"]}, None
            if seg == ["bug"] and method == "GET":
                bugs = list(self.bugs.values())
                wb = query.get("whiteboard", [None])[0]
                if wb is not None:
                    bugs = [b for b in bugs if wb in b["whiteboard"]]
                return 200, {"bugs": [self.bug_view(b) for b in bugs]}, None
            if len(seg) == 2 and seg[0] == "bug" and seg[1].isdigit():
                bug = self.bugs.get(int(seg[1]))
                if bug is None:
                    raise Answer(404, {"error": True, "code": 101,
                                       "message": "Bug #%s does not exist." % seg[1]})
                if method == "GET":
                    return 200, {"bugs": [self.bug_view(bug)]}, None
                if method == "PUT":
                    data = json.loads(body or b"{}")
                    changes = {}
                    for key in ("status", "resolution", "whiteboard"):
                        if key in data:
                            changes[key] = {"removed": bug[key], "added": data[key]}
                            bug[key] = data[key]
                    if data.get("status") == "REOPENED":
                        bug["resolution"] = ""
                    if isinstance(data.get("comment"), dict):
                        bug["comments"].append({"text": data["comment"].get("body", ""),
                                                "count": len(bug["comments"])})
                    return 200, {"bugs": [{"id": bug["id"], "changes": changes,
                                           "last_change_time": iso(time.time())}]}, None
            raise Answer(404, {"error": True, "code": 32614, "message": "no such resource"})

    @staticmethod
    def bug_view(bug):
        return {k: copy.deepcopy(v) for k, v in bug.items() if k != "comments"}

    def dump(self):
        with self.lock:
            issues = []
            for repo, numbered in self.issues.items():
                for number, issue in sorted(numbered.items()):
                    view = copy.deepcopy(issue)
                    view["repo"] = repo
                    view["comment_list"] = [
                        {k: v for k, v in c.items() if k not in ("repo", "issue")}
                        for c in self.comments.values() if c["repo"] == repo and c["issue"] == number]
                    issues.append(view)
            return {"issues": issues, "bugs": copy.deepcopy(list(self.bugs.values())),
                    "rate_limit": copy.deepcopy(self.rate)}
