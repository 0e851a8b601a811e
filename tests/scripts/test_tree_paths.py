# SPDX-License-Identifier: MPL-2.0
"""A clone of retrig is the whole project: no file of the repository may read a folder beside
it. Fails on any tracked file that names the sibling folder `shared` (with the parent
prefix `..` and a slash, or its fixtures or architecture file without it), or an absolute path under
the folder that holds the repository (a developer's own checkout path, say /work/...).
The fixtures live in tests/fixtures; the test also checks that every consumer's default
points there.

Run by ctest with /usr/bin/python3; env RT_TEST_SOURCE_DIR (repo root). Prints
'N passed, M failed'.
"""
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("RT_TEST_SOURCE_DIR", HERE.parent.parent)).resolve()

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def tracked_files():
    """The files git tracks (a fresh clone's content), or every file when not a checkout."""
    try:
        out = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"], capture_output=True,
                             check=True, timeout=60).stdout
        return [SOURCE / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "build", "build-asan", "build-fuzz", "build-bench"}
        return [p for p in SOURCE.rglob("*") if p.is_file() and not skip & set(p.parts)]


# The patterns are built from parts so that this file does not match itself.
SIBLING = re.compile(r"\.\./" + "shared" + r"\b|(?<![\w/.-])" + "shared" +
                     r"/(fixtures|ARCHITECTURE\.md|STYLE\.md)")
parent = SOURCE.parent
ABSOLUTE = None
if str(parent) not in ("/", "/tmp"):
    # /work/main -> "/work/" anywhere, but not "/tmp/work/..." (only a path that starts there).
    ABSOLUTE = re.compile(r"(?<![\w.~-])" + re.escape(str(parent)) + "/")

files = tracked_files()
check(len(files) > 100, "found %d files to scan under %s" % (len(files), SOURCE))
hits = []
for path in files:
    if path.resolve() == pathlib.Path(__file__).resolve():
        continue
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as e:
        hits.append("%s: unreadable (%s)" % (path, e))
        continue
    for lineno, line in enumerate(text.splitlines(), 1):
        rel = path.relative_to(SOURCE)
        if SIBLING.search(line):
            hits.append("%s:%d names the sibling folder: %s" % (rel, lineno, line.strip()[:160]))
        if ABSOLUTE and ABSOLUTE.search(line):
            hits.append("%s:%d names a path outside the repository (%s): %s"
                        % (rel, lineno, parent, line.strip()[:160]))
for h in hits:
    print(h)
check(not hits, "no file names a folder outside the repository (%d hits)" % len(hits))

# The self-test of the patterns: each must catch what it is for.
check(SIBLING.search("x = '../" + "shared/fixtures'"), "the sibling pattern catches the parent-relative form")
check(SIBLING.search("see " + "shared/fixtures/README"), "the sibling pattern catches the bare form")
check(not SIBLING.search("the shared families"), "the sibling pattern spares ordinary words")
if ABSOLUTE:
    check(ABSOLUTE.search("open('%s/other/x')" % parent), "the absolute pattern catches %s/" % parent)

# Every consumer of the fixtures defaults to the copy in the tree.
fixtures = SOURCE / "tests" / "fixtures"
for rel in ["pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json",
            "taskcluster/actions.json", "treeherder/jobs_list_with_property_names.json",
            "errorsummary/mochitest-browser-chrome_errorsummary.log",
            "perfherder/alert_summaries.json"]:
    check((fixtures / rel).is_file(), "tests/fixtures/%s exists" % rel)
check((fixtures / "README.md").is_file() and "MPL-2.0" in (fixtures / "README.md").read_text(),
      "tests/fixtures/README.md names the licence")
for rel, needle in [("tests/CMakeLists.txt", '"${PROJECT_SOURCE_DIR}/tests/fixtures"'),
                    ("tests/fake-upstream/fake_upstream.py", 'os.path.join(here, "..", "fixtures")'),
                    ("scripts/demo_driver.py", '"tests", "fixtures"')]:
    check(needle in (SOURCE / rel).read_text(), "%s defaults to tests/fixtures" % rel)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
