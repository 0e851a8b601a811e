# SPDX-License-Identifier: MPL-2.0
"""pages_browser.py - the pages of `retrig report` in headless Chromium, driven through the
DevTools protocol (cdp.py): what a person sees and does, read from the rendered document,
never by matching the HTML text. Run by tests/scripts/test_pages.sh, which writes the pages:

  flaky.html      the flaky-test page of a seeded history (retrig seed-history --hostile)
  decisions.html  the sheriffs' page of hand-made decisions (hostile ones among them)
  big.html        the flaky-test page of 2,000 tests

Checks: no console error, no exception and no JavaScript dialog on any page; the summary
cards; the "main only" toggle changes the rows, the figures and the charts, and the URL
keeps it across a reload; sorting by each column; the search box; paging; a link from a
summary card to its row; hostile names and texts shown as text, nothing injected; filters
and an expanding evidence row on the sheriffs' page, with its Treeherder links; the budget
charts with their limits; the 2,000-test page pages and searches. Screenshots of both pages
go to --shots. Prints "ok - ..." / "FAIL - ..." lines and a summary; exits 1 on a failure.
"""
import argparse
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, BrowserMissing, ProtocolError  # noqa: E402

REGRESSION = "browser/base/content/test/siteIdentity/browser_identityPopup_clearSiteData.js"
NEW = "browser/components/preferences/tests/browser_search_subdialog_tooltip.js"
FIXED = "accessible/tests/browser/tree/browser_aria_owns.js"
WINDOWS_ONLY = "browser/base/content/test/popups/browser_popup_close_main_window.js"
# The hostile tests of common/core/history_sim.c (seed-history --hostile).
HOSTILE_TESTS = [
    "dom/<script>alert('test')</script>/browser_evil.js",
    "dom/\"quoted\" & 'apostrophe' <b>/browser_quote.js",
    "intl/ünïcödé/✓/browser_ünïcödé_テスト.js",
]
HOSTILE_PROJECT = "try-<svg onload=alert('project')>"

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("FAIL - %s%s" % (what, (": " + str(detail)[:800]) if detail else ""))


# What the page shows, read from the live document.
VISIBLE_ROWS = """Array.from(document.querySelectorAll('#tests tbody tr'))
  .filter(r => !r.hidden && getComputedStyle(r).display !== 'none')
  .map(r => ({test: r.querySelector('.name').textContent,
              id: r.id,
              rate: [...r.querySelectorAll('td.rate b')].filter(b => b.offsetParent).map(b => b.textContent)[0],
              breadth: [...r.querySelectorAll('td.breadth b')].filter(b => b.offsetParent).map(b => b.textContent)[0],
              chance: [...r.querySelectorAll('td.chance b')].filter(b => b.offsetParent).map(b => b.textContent)[0],
              first: r.dataset.first || '',
              badges: [...r.querySelectorAll('.badge')].map(b => b.textContent)}))"""

# The drawn parts of a row's chart: visible rate paths, lanes and dots.
CHART = """((id) => { const svg = document.getElementById(id).querySelector('svg.runs');
  const shown = e => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 0;
  return {rate: [...svg.querySelectorAll('path.rate')].filter(shown).map(p => p.getAttribute('d')),
          other_lane: shown(svg.querySelector('.lane-other')),
          fail_dots: [...svg.querySelectorAll('.f')].filter(p => shown(p.parentNode)).length,
          width: svg.getBoundingClientRect().width}; })"""


def number(text):
    return float(text.replace("%", "").replace(",", "")) if text not in (None, "–") else -1


def sorted_as(values, descending):
    return values == sorted(values, reverse=descending)


def card(b, cls):
    return b.eval("""(() => { const c = document.querySelector('.card.%s'); return c ? {
        n: +c.querySelector('.big').textContent.replace(/,/g, ''),
        names: [...c.querySelectorAll('.names a')].map(a => a.title)} : null; })()""" % cls)


def check_flaky(b, path, shots):
    b.open("file://" + path)
    check(not b.errors and not b.dialogs, "flaky page: loads without console errors or dialogs",
          b.errors + b.dialogs)
    rows = b.eval(VISIBLE_ROWS)
    total = b.eval("document.querySelectorAll('#tests tbody tr').length")
    count = b.eval("document.getElementById('count').textContent")
    check(len(rows) == min(50, total) and count.startswith("1–%d of " % len(rows)),
          "flaky page: the first page shows 50 rows and says so", (len(rows), total, count))
    check(rows and any(x in " ".join(rows[0]["badges"]) for x in ("flaky", "fails since")),
          "flaky page: the flaky tests come first", rows[:1])
    by_test = {r["test"]: r for r in rows}
    regression = by_test.get(REGRESSION, {})
    check(any(x.startswith("fails since") for x in regression.get("badges", [])),
          "flaky page: the planted regression is marked as failing since it landed", regression)
    flaky_now, new, fixed = card(b, "flaky"), card(b, "new"), card(b, "fixed")
    check(flaky_now and flaky_now["n"] >= 8, "flaky page: the summary counts the flaky tests", flaky_now)
    check(new and new["n"] >= 1 and NEW in new["names"], "flaky page: the new flaky test is new this week", new)
    check(fixed and fixed["n"] >= 1 and FIXED in fixed["names"], "flaky page: a fixed test is fixed this week", fixed)
    coverage = b.eval("JSON.parse(document.getElementById('coverage-data').textContent)")
    check(coverage["runs"] > 10000 and any(g["hours"] >= 19 for g in coverage["gaps"]),
          "flaky page: what the data rests on names the collection gap", coverage.get("gaps"))
    gap_items = b.eval("[...document.querySelectorAll('#coverage li.gap')].length")
    check(gap_items == len(coverage["gaps"]), "flaky page: each gap is listed", gap_items)

    # The toggle, clicked as a person would, with a test that fails on Windows only.
    target = next((r for r in rows if r["test"] == WINDOWS_ONLY), rows[0])
    before_chart = b.eval("%s(%s)" % (CHART, json.dumps(target["id"])))
    check(before_chart["other_lane"] and len(before_chart["rate"]) == 1 and before_chart["width"] > 300,
          "flaky page: a chart shows both lanes and one rate line", before_chart)
    b.click("label[for=scope-main]")
    main_rows = b.eval(VISIBLE_ROWS)
    after_chart = b.eval("%s(%s)" % (CHART, json.dumps(target["id"])))
    check("scope=main" in b.eval("location.hash"), "flaky page: the URL remembers main only")
    check([r["test"] for r in main_rows] != [r["test"] for r in rows],
          "flaky page: main only shows other rows", [r["test"] for r in main_rows[:5]])
    main_target = next((r for r in main_rows if r["test"] == target["test"]), None)
    check(main_target and (main_target["rate"], main_target["breadth"]) != (target["rate"], target["breadth"]),
          "flaky page: main only shows the main branches' figures", (target, main_target))
    check(not after_chart["other_lane"] and after_chart["rate"] and after_chart["rate"] != before_chart["rate"],
          "flaky page: main only redraws the chart (one lane, the main branches' rate)", after_chart)
    main_count = b.eval("document.getElementById('count').textContent")
    check("main branches only" in main_count, "flaky page: the count names the scope", main_count)
    b.reload()
    check(b.eval("document.getElementById('scope-main').checked") and
          [r["test"] for r in b.eval(VISIBLE_ROWS)] == [r["test"] for r in main_rows],
          "flaky page: a reload with the URL comes back to main only")
    b.click("label[for=scope-all]")
    check([r["test"] for r in b.eval(VISIBLE_ROWS)] == [r["test"] for r in rows],
          "flaky page: all branches again shows the first rows again")

    # Sorting, by each column, both ways.
    for column, key, first_descending in (("rate", "rate", True), ("breadth", "breadth", True),
                                          ("chance", "chance", True), ("first", "first", False)):
        b.click("th[data-sort=%s] button" % column)
        values = [r[key] if key == "first" else number(r[key]) for r in b.eval(VISIBLE_ROWS)]
        ok = sorted_as(values, first_descending)
        b.click("th[data-sort=%s] button" % column)
        values2 = [r[key] if key == "first" else number(r[key]) for r in b.eval(VISIBLE_ROWS)]
        check(ok and sorted_as(values2, not first_descending) and values != values2,
              "flaky page: sorting by %s, then the other way" % column, (values[:6], values2[:6]))
    check("sort=first" in b.eval("location.hash"), "flaky page: the URL remembers the sort")
    b.click("th[data-sort=rank] button")

    # The search box, typed into.
    b.type("#search", "pictureinpicture")
    found = b.eval(VISIBLE_ROWS)
    check(len(found) >= 2 and all("pictureinpicture" in r["test"] for r in found),
          "flaky page: the search box keeps the matching tests", [r["test"] for r in found])
    check("q=pictureinpicture" in b.eval("location.hash"), "flaky page: the URL remembers the search")
    b.type("#search", "")

    # Paging.
    first_page = [r["test"] for r in b.eval(VISIBLE_ROWS)]
    b.click("#next")
    second_page = [r["test"] for r in b.eval(VISIBLE_ROWS)]
    check(second_page and not set(second_page) & set(first_page)
          and b.eval("document.getElementById('where').textContent").startswith("page 2 of"),
          "flaky page: the next page shows the next rows", second_page[:3])
    b.click("#prev")

    # A summary card's link shows its row.
    b.click(".card.new .names a")
    shown = b.eval(VISIBLE_ROWS)
    check(len(shown) == 1 and shown[0]["test"] == NEW and
          b.eval("document.querySelector('tr.target') !== null"),
          "flaky page: a summary card's link shows that test's row", shown)
    b.type("#search", "")

    # Hostile names: shown as text, nothing injected.
    b.type("#search", "<")
    names = [r["test"] for r in b.eval(VISIBLE_ROWS)]
    check(all(t in names for t in HOSTILE_TESTS[:2]),
          "flaky page: hostile test names are shown as text", names)
    b.type("#search", "ünïcödé")
    check([r["test"] for r in b.eval(VISIBLE_ROWS)] == [HOSTILE_TESTS[2]],
          "flaky page: non-ASCII test names are shown and searchable")
    b.type("#search", "")
    injected = b.eval("""({scripts: document.scripts.length,
        images: document.images.length,
        handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
        bold_in_names: document.querySelectorAll('.name b, .name script, .name img').length,
        project: [...document.querySelectorAll('#coverage li b')].map(e => e.textContent)})""")
    check(injected["scripts"] == 2 and injected["images"] == 0 and injected["handlers"] == 0
          and injected["bold_in_names"] == 0 and HOSTILE_PROJECT in injected["project"] and not b.dialogs,
          "flaky page: no element, handler or dialog comes from the data", injected)
    check(not b.errors, "flaky page: no console error after all that", b.errors)

    # Without JavaScript: every row and chart is there, and the toggle (CSS) still works.
    b.eval("history.replaceState(null, '', location.pathname)")
    b.set_scripts(False)
    b.open("file://" + path)
    plain = b.eval(VISIBLE_ROWS)
    charts = b.eval("document.querySelectorAll('#tests svg.runs').length")
    b.click("label[for=scope-main]")
    plain_main = b.eval(VISIBLE_ROWS)
    other_lanes = b.eval("[...document.querySelectorAll('.lane-other')].filter(e => getComputedStyle(e).display !== 'none').length")
    check(len(plain) == total and charts == total, "without JavaScript: every test and its chart", (len(plain), charts, total))
    check(0 < len(plain_main) < len(plain) and other_lanes == 0,
          "without JavaScript: main only still switches rows and charts", (len(plain_main), other_lanes))
    b.set_scripts(True)
    b.open("about:blank")
    b.open("file://" + path)
    b.screenshot(os.path.join(shots, "pages-flaky.png"), height=1500)


def check_decisions(b, path, shots):
    b.open("file://" + path)
    check(not b.errors and not b.dialogs, "decisions page: loads without console errors or dialogs",
          b.errors + b.dialogs)
    items = b.eval("""[...document.querySelectorAll('details.decision')].map(d => ({
        verdict: d.dataset.verdict, project: d.dataset.project, platform: d.dataset.platform,
        label: d.querySelector('summary .label').textContent, shown: !d.hidden}))""")
    check(len(items) == 4 and {i["verdict"] for i in items} == {"regression", "intermittent", "undecided", "infra"},
          "decisions page: every verdict is listed, the infra failure too", items)
    check("<script>alert('label')</script>" in [i["label"] for i in items],
          "decisions page: a hostile label is shown as text", [i["label"] for i in items])
    b.eval("(() => { const s = document.getElementById('f-verdict'); s.value = 'regression';"
           " s.dispatchEvent(new Event('change')); })()")
    shown = b.eval("[...document.querySelectorAll('details.decision')].filter(d => !d.hidden).map(d => d.dataset.verdict)")
    check(shown == ["regression"] and "verdict=regression" in b.eval("location.hash"),
          "decisions page: the verdict filter keeps the regressions and the URL says so", shown)
    b.open("file://" + path + "#verdict=intermittent")
    shown = b.eval("[...document.querySelectorAll('details.decision')].filter(d => !d.hidden).map(d => d.dataset.verdict)")
    check(shown == ["intermittent"], "decisions page: the URL's filter is applied on load", shown)
    b.eval("(() => { const s = document.getElementById('f-verdict'); s.value = '';"
           " s.dispatchEvent(new Event('change')); })()")
    b.eval("(() => { const s = document.getElementById('f-platform'); s.value = s.options[1].value;"
           " s.dispatchEvent(new Event('change')); })()")
    platform = b.eval("document.getElementById('f-platform').value")
    shown = b.eval("[...document.querySelectorAll('details.decision')].filter(d => !d.hidden).map(d => d.dataset.platform)")
    check(shown and all(p == platform for p in shown), "decisions page: the platform filter", (platform, shown))
    b.eval("(() => { const s = document.getElementById('f-platform'); s.value = '';"
           " s.dispatchEvent(new Event('change')); })()")

    # An evidence row, expanded by a click.
    b.click("details.decision[data-verdict=regression] > summary")
    evidence = b.eval("""(() => { const d = document.querySelector('details.decision[data-verdict=regression]');
        const e = d.querySelector('.evidence'); const rows = [...e.querySelectorAll('table')[0].tBodies[0].rows];
        return {open: d.open, height: e.getBoundingClientRect().height,
                lines: rows.map(r => ({squares: r.querySelectorAll('.repro i').length,
                                       yes: r.querySelectorAll('.repro i.yes').length,
                                       history: r.querySelector('.history').textContent,
                                       p: r.cells.length > 3 ? r.cells[3].textContent : null})),
                p_decision: e.textContent.includes('p_regression'),
                links: [...d.querySelectorAll('a.th')].filter(a => !a.closest('.culprit')).map(a => a.href),
                culprit: [...d.querySelectorAll('.culprit a.th')].map(a => a.href)}; })()""")
    check(evidence["open"] and evidence["height"] > 100, "decisions page: a click expands the evidence", evidence)
    lines = evidence["lines"]
    check(len(lines) == 2 and [l["squares"] for l in lines] == [3, 3] and [l["yes"] for l in lines] == [2, 1],
          "decisions page: which retrigger reproduced which line", lines)
    check("flaky" in lines[0]["history"] and "first failed" in lines[0]["history"],
          "decisions page: the history beside each line", lines[0]["history"])
    check(lines[0]["p"] and "0.930" in lines[0]["p"] and evidence["p_decision"],
          "decisions page: p_regression of the lines and of the decision row", lines)
    links = [urllib.parse.urlsplit(u) for u in evidence["links"]]
    params = [urllib.parse.parse_qs(u.query) for u in links]
    check(links and all(u.scheme == "https" and u.netloc == "treeherder.mozilla.org" and u.path == "/jobs" for u in links)
          and all(p["repo"] == ["autoland"] and p["revision"] == ["b437ae030825a8ea9fa7a632b1fcb9becbe11f69"] for p in params)
          and any(p.get("selectedTaskRun") == ["QvtfxLLN1sx2YcyHTDT9MA-0"] for p in params),
          "decisions page: Treeherder links for the push and the jobs", evidence["links"])
    culprit = [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query).get("revision") for u in evidence["culprit"]]
    check(["c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe"] in culprit and ["ba5eba11ba5eba11ba5eba11ba5eba11ba5eba11"] in culprit,
          "decisions page: Treeherder links for the culprit push and the pushes probed", evidence["culprit"])
    hostile = b.eval("""(() => { const d = document.querySelector('details.decision[data-verdict=intermittent]');
        d.open = true; return {links: [...d.querySelectorAll('a.th')].map(a => a.href),
        line: d.querySelector('td.line').textContent, project: d.dataset.project}; })()""")
    hostile_params = [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query) for u in hostile["links"]]
    check(hostile["links"] and all(p["revision"] == ["\"><img src=x onerror=alert('rev')>"] for p in hostile_params)
          and all(urllib.parse.urlsplit(u).netloc == "treeherder.mozilla.org" for u in hostile["links"]),
          "decisions page: a hostile revision stays inside its link's query", hostile["links"])
    check(hostile["line"].startswith("TEST-UNEXPECTED-FAIL | </td></tr><script>"),
          "decisions page: a hostile failure line is shown as text", hostile["line"])
    injected = b.eval("""({scripts: document.scripts.length, images: document.images.length,
        handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length})""")
    check(injected == {"scripts": 1, "images": 0, "handlers": 0} and not b.dialogs,
          "decisions page: no element, handler or dialog comes from the data", injected)

    budgets = b.eval("""[...document.querySelectorAll('.budget-card')].map(c => ({
        title: c.querySelector('.title').textContent, bars: c.querySelectorAll('rect.bar').length,
        limit: c.querySelectorAll('line.limit').length, full: !!c.querySelector('.gauge.full')}))""")
    retriggers = [x for x in budgets if x["title"] == "linux1804-64-qr"]
    perf = [x for x in budgets if x["title"] == "linux"]
    check(retriggers and retriggers[0]["bars"] == 3 and retriggers[0]["limit"] == 1,
          "decisions page: retriggers per platform per day, with the limit", budgets)
    check(perf and perf[0]["limit"] == 1 and perf[0]["full"], "decisions page: backfills per family, the limit reached",
          budgets)
    backfills = b.eval("[...document.querySelectorAll('#backfills tbody tr')].length")
    check(backfills == 2, "decisions page: retrig-perf's backfills", backfills)
    check(not b.errors, "decisions page: no console error after all that", b.errors)
    b.eval("history.replaceState(null, '', location.pathname)")
    b.open("file://" + path)
    b.click("details.decision[data-verdict=regression] > summary")
    b.screenshot(os.path.join(shots, "pages-decisions.png"), height=1500)


def check_big(b, path):
    size = os.path.getsize(path)
    check(size < 5_000_000, "2,000 tests: the file is under 5 MB", size)
    started = time.time()
    b.open("file://" + path)
    loaded = time.time() - started
    check(not b.errors and not b.dialogs, "2,000 tests: loads without console errors", b.errors)
    total = b.eval("document.querySelectorAll('#tests tbody tr').length")
    rows = b.eval(VISIBLE_ROWS)
    check(total == 2000 and len(rows) == 50, "2,000 tests: 2,000 rows, 50 shown", (total, len(rows)))
    check(loaded < 20, "2,000 tests: loads in %.1f s" % loaded)
    b.click("th[data-sort=rate] button")
    started = time.time()
    b.type("#search", "browser_tab")
    found = b.eval(VISIBLE_ROWS)
    check(found and all("browser_tab" in r["test"] for r in found) and time.time() - started < 5,
          "2,000 tests: searching and sorting stay quick", len(found))
    b.click("label[for=scope-main]")
    check(len(b.eval(VISIBLE_ROWS)) > 0, "2,000 tests: main only")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="folder holding flaky.html, decisions.html, big.html")
    p.add_argument("--shots", required=True, help="folder for the screenshots")
    args = p.parse_args()
    try:
        with Browser(width=1440, height=1000) as b:
            for name, fn in (("flaky.html", lambda x: check_flaky(b, x, args.shots)),
                             ("decisions.html", lambda x: check_decisions(b, x, args.shots)),
                             ("big.html", lambda x: check_big(b, x))):
                try:
                    fn(os.path.join(args.work, name))
                except (ProtocolError, OSError) as e:
                    check(False, "%s: the browser session" % name, repr(e))
    except BrowserMissing as e:
        check(False, "headless Chromium", e)
    print("# %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
