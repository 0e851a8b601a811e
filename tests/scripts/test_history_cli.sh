#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_history_cli.sh - the test history from the command line, on a fresh database of the
# local Postgres: `retrig ingest-junit` (idempotent, duplicates merged with failure
# winning, a truncated file an error that writes nothing, OWNER/REPO validated), `retrig
# flakes` on a hand-checkable history (a test failing on 4 pull requests in a week is
# flaky though it never failed on main; one failing on 3 branches is not; the first
# failure is the earliest run with the same signature, before the window), and `retrig
# report`: one self-contained HTML page that parses and carries the expected figures of
# both scopes (its behaviour in a browser is test_pages.sh's). Creates its own database,
# drops it on exit.
set -u
BIN=${RT_TEST_BIN_DIR:?}
SRC=${RT_TEST_SOURCE_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done

PG_HOST=127.0.0.1 PG_PORT=5433 PG_USER=retrig PG_PASSWORD=retrig
db="rt_test_history_cli_$$_${RANDOM}"
export RETRIG_DATABASE_URL="postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$db"
work=$(mktemp -d)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
admin() {
    PGPASSWORD=$PG_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d retrig "$@"
}
sql() { PGPASSWORD=$PG_PASSWORD psql -X -Atq -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" -c "$1"; }
cleanup() {
    admin -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
admin -c "CREATE DATABASE \"$db\"" || { echo "FAIL - cannot create database $db"; exit 1; }
"$BIN/retrig" migrate >/dev/null 2>&1 || { echo "FAIL - migrate"; exit 1; }

expect() {
    local name=$1 status=$2 pattern=$3; shift 4
    "$@" >"$work/out" 2>&1; local got=$?
    if [ "$got" != "$status" ]; then bad "$name: exit $got, expected $status: $(head -c 600 "$work/out")"; return; fi
    if ! grep -Eq -- "$pattern" "$work/out"; then bad "$name: output lacks /$pattern/: $(head -c 600 "$work/out")"; return; fi
    ok "$name"
}
same() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', expected '$3'"; fi; }

# junit FILE TIMESTAMP RESULT... writes a pytest-style report; RESULT is NAME=pass|fail|error|skip.
junit() {
    local file=$1 ts=$2; shift 2
    {
        echo '<?xml version="1.0" encoding="utf-8"?>'
        echo "<testsuites><testsuite name=\"pytest\" tests=\"$#\" timestamp=\"$ts\">"
        for r in "$@"; do
            local name=${r%%=*} what=${r#*=}
            echo "<testcase classname=\"tests.${name%%.*}\" name=\"${name#*.}\" time=\"0.1\">"
            case $what in
            fail) echo "<failure message=\"ConnectionResetError: [Errno 104] Connection reset by peer\">trace</failure>" ;;
            fail2) echo "<failure message=\"assert 1 == 2\">trace</failure>" ;;
            error) echo "<error message=\"fixture 'db' not found\">trace</error>" ;;
            skip) echo "<skipped message=\"not on linux\"/>" ;;
            esac
            echo "</testcase>"
        done
        echo "</testsuite></testsuites>"
    } >"$work/$file"
}
ingest() { "$BIN/retrig" ingest-junit --project acme/widgets "$@"; }

# ---- ingest-junit ----
junit dup.xml 2024-05-01T08:00:00 net.test_a=pass net.test_a=fail db.test_b=pass net.test_a=pass
expect "ingest-junit records a run" 0 "2 tests \(4 testcases read\), 1 failing" -- \
    ingest --branch main --main --run-id r0 --revision 0123456789abcdef "$work/dup.xml"
same "a duplicated testcase is one row" "$(sql "SELECT count(*) FROM history_tests")" 2
# a failure and passes of one test in one report are attempts (Gradle's retries): still failed,
# stored as FLAKY (issue 31)
same "the failure wins over the passes of the same test, as a flaky result" \
    "$(sql "SELECT status || ' ' || failed FROM history_tests WHERE test = 'tests.net::test_a'")" "FLAKY true"
same "--time defaults to the testsuite timestamp (UTC)" \
    "$(sql "SELECT to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM history_runs")" "2024-05-01 08:00"
junit pass.xml 2024-05-01T09:00:00 net.test_a=pass db.test_b=fail2
expect "ingesting the same run again merges" 0 "merged" -- \
    ingest --branch main --main --run-id r0 --revision 0123456789abcdef "$work/dup.xml"
expect "a later file of the same run merges, failure winning" 0 "merged" -- \
    ingest --branch main --main --run-id r0 --revision 0123456789abcdef "$work/pass.xml"
same "one run, both tests failed now" \
    "$(sql "SELECT count(DISTINCT run_id) || ' ' || count(*) FILTER (WHERE failed) FROM history_tests")" "1 2"
same "the run is recorded once" "$(sql "SELECT count(*) FROM history_runs")" 1

head -c 150 "$work/pass.xml" >"$work/truncated.xml"
expect "a truncated file is an error naming the file and line" 1 "truncated\.xml.*line [0-9]+" -- \
    ingest --branch feat --run-id r1 --revision 0123456789abcdef "$work/pass.xml" "$work/truncated.xml"
echo '<html><body>not junit</body></html>' >"$work/html.xml"
expect "a document that is not JUnit is an error" 1 "root element <html>" -- \
    ingest --branch feat --run-id r1 --revision 0123456789abcdef "$work/html.xml"
same "nothing was written by the failed calls" "$(sql "SELECT count(*) FROM history_runs")" 1
expect "a project without an owner is refused" 2 "OWNER/REPO" -- \
    "$BIN/retrig" ingest-junit --project widgets --branch b --run-id r --revision 0123456 "$work/pass.xml"
expect "a project with a second slash is refused" 2 "OWNER/REPO" -- \
    "$BIN/retrig" ingest-junit --project a/b/c --branch b --run-id r --revision 0123456 "$work/pass.xml"
expect "a revision that is not hex is refused" 2 "revision" -- \
    ingest --branch b --run-id r --revision zzzzzzz "$work/pass.xml"
expect "no timestamp and no --time is an error" 1 "no --time" -- bash -c \
    "sed 's/ timestamp=\"[^\"]*\"//' '$work/pass.xml' >'$work/nots.xml' &&
     '$BIN/retrig' ingest-junit --project acme/widgets --branch b --run-id r9 --revision 0123456 '$work/nots.xml'"
sql "TRUNCATE history_runs CASCADE" >/dev/null 2>&1

# ---- a hand-checkable history: window [2024-05-03, 2024-05-10) ----
# test_flaky fails on PRs 1-4 (PR 4 twice) and passes on main: flaky, never failed on main.
# test_some fails on main, PR 2 and PR 4: main is never breadth, and PR 2's failure is on
# 2024-05-05, a day main was broken by the test (its one main run that day failed), so it is
# not breadth either: 1 branch under review (PR 4), not flaky, not even with --min-branches 2.
# An old failure of test_flaky on PR 9 (2024-04-20) is its first failure.
add() { # RUN-ID TIME BRANCH-ARGS... -- RESULTS...
    local id=$1 ts=$2; shift 2
    local args=()
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    junit "$id.xml" "$ts" "$@"
    ingest "${args[@]}" --run-id "$id" --revision "$(printf '%040d' "${id#r}")" "$work/$id.xml" >/dev/null ||
        bad "ingest $id"
}
add r1 2024-05-05T10:00:00Z --branch main --main -- net.test_flaky=pass db.test_some=fail2 ui.test_ok=pass
add r2 2024-05-08T10:00:00Z --branch main --main -- net.test_flaky=pass db.test_some=pass ui.test_ok=pass
add r3 2024-05-04T09:00:00Z --branch feat-1 --pr 1 -- net.test_flaky=fail db.test_some=pass ui.test_ok=pass
add r4 2024-05-05T09:00:00Z --branch feat-2 --pr 2 -- net.test_flaky=fail db.test_some=fail2 ui.test_ok=pass
add r5 2024-05-06T09:00:00Z --branch feat-3 --pr 3 -- net.test_flaky=fail db.test_some=pass ui.test_ok=pass
add r6 2024-05-07T09:00:00Z --branch feat-4 --pr 4 -- net.test_flaky=fail db.test_some=fail2 ui.test_ok=pass
add r7 2024-05-07T12:00:00Z --branch feat-4 --pr 4 -- net.test_flaky=fail db.test_some=pass ui.test_ok=pass
add r8 2024-04-20T09:00:00Z --branch feat-9 --pr 9 -- net.test_flaky=fail db.test_some=pass ui.test_ok=pass

flakes() { "$BIN/retrig" flakes --project acme/widgets --until 2024-05-10T00:00:00Z --window 7d "$@"; }
flakes --format json >"$work/all.json" 2>"$work/err" || bad "flakes json: $(cat "$work/err")"
flakes --format json --main-only >"$work/main.json" 2>"$work/err" || bad "flakes --main-only: $(cat "$work/err")"
flakes --format json --min-branches 2 >"$work/min2.json" 2>"$work/err" || bad "flakes --min-branches: $(cat "$work/err")"
"$PY" - "$work" <<'EOF' && ok "flakes JSON answers the hand-checked questions" || bad "flakes JSON"
import json, sys
w = sys.argv[1]
load = lambda n: {r["test"]: r for r in json.load(open(f"{w}/{n}.json"))["tests"]}
every, main, min2 = load("all"), load("main"), load("min2")
def check(cond, what):
    if not cond:
        print("  wrong:", what, file=sys.stderr)
        sys.exit(1)
for rows in (every, main, min2):
    for r in rows.values():
        check({"test", "runs", "failures", "failure_rate", "branches", "first_failure", "flaky"} <= set(r), r)
f, s = every["tests.net::test_flaky"], every["tests.db::test_some"]
check(set(every) == {"tests.net::test_flaky", "tests.db::test_some"}, sorted(every))
check((f["runs"], f["failures"], f["branches"], f["flaky"]) == (7, 5, 4, True), f)
check(abs(f["failure_rate"] - 5 / 7) < 1e-6, f)
check(f["prs"] == 4 and f["pushes"] == 7 and f["pushes_failed"] == 5, f)
ff = f["first_failure"]
check(ff["time"] == "2024-04-20T09:00:00Z" and ff["branch"] == "feat-9", ff)
check(ff["revision"] == "%040d" % 8, ff)
check(ff["signature"] == "TEST-UNEXPECTED-FAIL | tests.net::test_flaky | ConnectionResetError: [Errno 104] Connection reset by peer", ff)
check((s["runs"], s["failures"], s["branches"], s["flaky"]) == (7, 3, 1, False), s)
check(s["first_failure"]["time"] == "2024-05-05T09:00:00Z", s)
# Main only: the flaky test is still flagged though it never failed on main.
mf, ms = main["tests.net::test_flaky"], main["tests.db::test_some"]
check((mf["runs"], mf["failures"], mf["failure_rate"], mf["flaky"]) == (2, 0, 0, True), mf)
check(mf["first_failure"]["time"] == "2024-04-20T09:00:00Z", mf)
check((ms["runs"], ms["failures"], ms["failure_rate"]) == (2, 1, 0.5), ms)
check(min2["tests.db::test_some"]["flaky"] is False, min2["tests.db::test_some"])
check(min2["tests.net::test_flaky"]["flaky"] is True, min2["tests.net::test_flaky"])
# The flaky test comes first.
doc = json.load(open(f"{w}/all.json"))
check(doc["tests"][0]["test"] == "tests.net::test_flaky", "order")
# A JUnit project has no GitHub runs: the coverage section is there, empty.
check(doc["coverage"]["run_attempts"] == 0 and doc["gaps"] == [], doc["coverage"])
check(doc["tests"][0]["rerun_flips"] == 0 and doc["tests"][0]["issue"] is None, doc["tests"][0])
EOF
expect "flakes table lists the flaky test" 0 "yes +7 +5 +71\.4% +4 .*tests\.net::test_flaky" -- flakes
expect "flakes needs --project" 2 "usage" -- "$BIN/retrig" flakes
expect "flakes rejects a bad window" 2 "window" -- flakes --window 7x
# Without --until every read of the command (tests, variants, outcomes, flips, gaps) ends
# its window at the end of the current UTC day, the one the JSON names: not at "now".
tomorrow=$(date -u -d tomorrow +%Y-%m-%dT00:00:00Z)
expect "flakes without --until ends its window at the end of today" 0 "\"until\": \"$tomorrow\"" -- \
    "$BIN/retrig" flakes --project acme/widgets --format json

# ---- the flaky-test page (its behaviour in a browser: tests/scripts/test_pages.sh) ----
report="$work/report.html"
expect "report writes the page" 0 "2 tests \(all branches\), 2 \(main only\), 1 flaky now" -- \
    "$BIN/retrig" report --project acme/widgets --until 2024-05-10T00:00:00Z --window 7d --out "$report"
"$PY" - "$report" <<'EOF' && ok "the page parses, is self-contained and carries both scopes' figures" || bad "report HTML"
import html.parser, json, sys
text = open(sys.argv[1], encoding="utf-8").read()
class Page(html.parser.HTMLParser):
    VOID = {"meta", "input", "br", "link", "img", "wbr"}
    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.rows, self.scripts = [], [], {}, []
        self.row = self.cell = self.scope = self.script = None
        self.name = ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("link", "iframe", "img") or (tag == "script" and "src" in a):
            self.errors.append(f"<{tag}> {a}")
        if tag == "script": self.script = a.get("type", "")
        if tag == "tr" and a.get("id", "").startswith("t-"): self.row, self.name = {}, ""
        if tag == "div" and a.get("class") == "name": self.cell = "name"
        if tag == "td" and self.row is not None: self.cell = (a.get("class") or "").split()
        if tag == "span" and a.get("class") in ("v-all", "v-main"): self.scope = a["class"][2:]
        if tag not in self.VOID: self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        pass  # <use/>, <path/>: self-closed in SVG
    def handle_endtag(self, tag):
        if tag in self.VOID: return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else: self.stack.pop()
        if tag == "div" and self.cell == "name": self.cell = None
        if tag == "tr" and self.row is not None: self.rows[self.name], self.row = self.row, None
        if tag == "script": self.script = None
    def handle_data(self, data):
        if self.script is not None: self.scripts.append((self.script, data))
        if self.row is None: return
        if self.cell == "name": self.name += data
        elif isinstance(self.cell, list) and self.scope and self.stack[-1] == "b":
            for c in ("rate", "breadth", "chance"):
                if c in self.cell: self.row[(self.scope, c)] = data.strip()
p = Page(); p.feed(text); p.close()
assert not p.errors and not p.stack, (p.errors[:5], p.stack)
assert text.startswith("<!DOCTYPE html>") and "SPDX-License-Identifier" in text[:200]
f, s = p.rows["tests.net::test_flaky"], p.rows["tests.db::test_some"]
assert (f["all", "rate"], f["all", "breadth"]) == ("71.4%", "4"), f
assert (f["main", "rate"], f["main", "breadth"]) == ("0.0%", "0"), f
assert s["main", "rate"] == "50.0%", s
assert 'id="scope-main"' in text and 'id="scope-all"' in text
coverage = [json.loads(d) for t, d in p.scripts if t == "application/json"]
assert len(coverage) == 1 and coverage[0]["runs"] == 7 and coverage[0]["prs"] == 4, coverage
EOF

# A revision that is markup is escaped like every other stored text (it was printed raw).
# The page reads the first failure from the per-day rollup (migration 0020), which keeps its
# own copy of the run's revision: both are changed.
sql "UPDATE history_runs SET revision = '<b>0123456</b><script>x</script>'" >/dev/null
sql "UPDATE history_rollup_tests SET first_failure = jsonb_set(first_failure, '{revision}',
     to_jsonb('<b>0123456</b><script>x</script>'::text)) WHERE first_failure IS NOT NULL" >/dev/null
"$BIN/retrig" report --project acme/widgets --until 2024-05-10T00:00:00Z --window 7d \
    --out "$work/markup.html" >/dev/null 2>&1
if grep -q '<b>0123\|<script>x' "$work/markup.html"; then
    bad "report printed a revision as markup"
elif grep -q '&lt;b&gt;0123456' "$work/markup.html"; then
    ok "report escapes the revision"
else
    bad "report shows no revision: $(grep -o 'first[^<]*<br><small>[^<]*' "$work/markup.html" | head -2)"
fi
echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
