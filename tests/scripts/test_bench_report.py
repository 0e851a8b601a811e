# SPDX-License-Identifier: MPL-2.0
"""Checks scripts/bench_report.py, which writes docs/BENCHMARKS.md from scripts/bench's
collected output: every figure the benchmarks print reaches the summary with the right
met / not met against its target, a benchmark that failed is named, its output is shown
without the machine lines, the machine section is filled, and the hand-written notes
follow verbatim. Also that every `figure:` key the report reads is printed by some
benchmark source (so the two cannot drift apart silently).

Run by ctest with /usr/bin/python3; env RT_TEST_SOURCE_DIR (repo root).
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("RT_TEST_SOURCE_DIR", HERE.parent.parent))
REPORT = SOURCE / "scripts" / "bench_report.py"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


LOGS = {
    "bench_classify": """retrig-classify benchmark: one worker
raw consume+ack loop        20000 msgs      23000 msg/s
figure: classify_raw_msgs_per_s 23000
figure: classify_completed_msgs_per_s 19550
figure: classify_ratio 0.85
figure: classify_eligible_msgs_per_s 140
figure: rss_peak_mb.retrig-classify-completed 13.4
figure: rss_peak_mb.retrig-classify-eligible 14.9
""",
    "bench_decide": """figure: decide_p50_ms 522
figure: decide_p99_ms 2119
figure: decide_max_ms 2140
figure: decide_sets 200
figure: decide_window_ms 3000
""",
    "bench_scaling": """figure: scaling_one_msgs_per_s 3.8
figure: scaling_many_msgs_per_s 11.0
figure: scaling_replicas 3
figure: scaling_ratio 2.93
figure: scaling_latency_ms 50
""",
    "bench_history": """figure: history_outcomes 1000000
figure: history_ingest_rows_per_s 31622
figure: history_copy_rows_per_s 48537
figure: history_ingest_ratio 0.65
figure: history_query_ms.history_flakes_7_days_all_branches 787.0
figure: history_query_ms.history_flakes_30_days_all_branches 1521.0
figure: history_command_ms.retrig_report_project_gecko 3435.0
""",
    "bench_errorsummary": """figure: errorsummary_ms_per_mb.real 2.500
figure: errorsummary_ms_per_mb.long-names 2.400
figure: errorsummary_ms_per_mb.lookups 8.100
figure: errorsummary_real_ms_per_mb 2.500
figure: errorsummary_worst_ratio 3.240
""",
    "bench_workers": """{"ts":"2026-01-01T00:00:00Z","level":"info","msg":"noise"}
figure: rss_peak_mb.retrig-decide 9.8
figure: rss_peak_mb.retrig-history 11.2
""",
    "bench_simulate": """$ retrig simulate --cases uniform.jsonl --policy seed --policy adaptive --policy mozci
| policy | accuracy |
figure: simulate.uniform.seed.accuracy 0.891
figure: simulate.uniform.seed.recall 0.958
figure: simulate.uniform.seed.false_regression 0.121
figure: simulate.uniform.seed.retriggers 5
figure: simulate.uniform.seed.rounds 1
figure: simulate.uniform.adaptive.accuracy 0.985
figure: simulate.uniform.adaptive.recall 0.934
figure: simulate.uniform.adaptive.false_regression 0.0054
figure: simulate.uniform.adaptive.retriggers 2.62
figure: simulate.uniform.adaptive.rounds 1.23
figure: simulate.uniform.mozci.accuracy 0.959
figure: simulate.uniform.mozci.recall 0.74
figure: simulate.uniform.mozci.false_regression 0.001
figure: simulate.uniform.mozci.retriggers 5
figure: simulate.uniform.mozci.rounds 1
figure: simulate.observed.seed.accuracy 0.676
figure: simulate.observed.seed.recall 0.958
figure: simulate.observed.seed.false_regression 0.375
figure: simulate.observed.seed.retriggers 5
figure: simulate.observed.seed.rounds 1
figure: simulate.observed.adaptive.accuracy 0.94
figure: simulate.observed.adaptive.recall 0.939
figure: simulate.observed.adaptive.false_regression 0.007
figure: simulate.observed.adaptive.retriggers 2.88
figure: simulate.observed.adaptive.rounds 1.36
figure: simulate.observed.mozci.accuracy 0.955
figure: simulate.observed.mozci.recall 0.74
figure: simulate.observed.mozci.false_regression 0.006
figure: simulate.observed.mozci.retriggers 5
figure: simulate.observed.mozci.rounds 1
figure: simulate.seed_at_15.false_regression 0.1703
figure: simulate.seed_at_50.false_regression 0.8091
figure: simulate.cases 20000
""",
    "bench_culprit": """| all | 100000 | 96.9% |
figure: culprit_cases 100000
figure: culprit_correct_pct 96.9
figure: culprit_stopped_pct 0.01
figure: culprit_rounds_within_bound_pct 97.9
figure: culprit_rounds_within_bound_reruns_aside_pct 100.0
figure: culprit_jobs_ratio 0.34
figure: culprit_trusted_correct_pct 91.4
""",
}


def run(tmp, statuses):
    collect = tmp / "collect"
    collect.mkdir(exist_ok=True)
    for name, text in LOGS.items():
        (collect / f"{name}.log").write_text(text)
        (collect / f"{name}.status").write_text(statuses.get(name, "0") + "\n")
        (collect / f"{name}.cmd").write_text(f"build-bench/bench/{name}\n")
    (collect / "meta.txt").write_text("date: 2026-11-30T10:00Z\ncommit: abc1234\n")
    notes = tmp / "notes.md"
    notes.write_text("## Notes\n\nHand-written: what limits the figures.\n")
    out = tmp / "BENCHMARKS.md"
    res = subprocess.run(["/usr/bin/python3", str(REPORT), str(collect), str(out), str(notes)],
                         capture_output=True, text=True, check=False)
    check(res.returncode == 0, f"report exits 0 (got {res.returncode}: {res.stderr})")
    return out.read_text() if out.exists() else ""


def summary_row(page, start):
    for line in page.splitlines():
        if line.startswith("| " + start):
            return line
    return ""


with tempfile.TemporaryDirectory() as d:
    page = run(pathlib.Path(d), {"bench_scaling": "1"})

row = summary_row(page, "retrig-classify, completed path")
check("19,550 msg/s" in row and "23,000 msg/s" in row and "0.85" in row and row.endswith("| met |"),
      f"classify row: {row}")
row = summary_row(page, "retrig-classify, eligible path")
check("140 msg/s" in row and "**not met**" in row, f"eligible row: {row}")
row = summary_row(page, "decision latency")
check("p50 522 ms" in row and "p99 2,119 ms" in row and "**not met**" in row, f"decide row: {row}")
row = summary_row(page, "test history ingest")
check("0.65" in row and row.endswith("| met |"), f"ingest row: {row}")
row = summary_row(page, "dashboard queries")
check("1,521 ms" in row and "history_flakes_30_days_all_branches" in row and "**not met**" in row,
      f"queries row: {row}")
row = summary_row(page, "the dashboard's commands")
check("`retrig report` 3,435 ms" in row and "retrig report < 3,000 ms" in row
      and row.endswith("| **not met** |"), f"commands row (report over 3 s): {row}")
row = summary_row(page, "peak resident memory")
check("retrig-decide 9.8 MB" in row and "retrig-classify-eligible 14.9 MB" in row
      and row.endswith("| met |"), f"rss row: {row}")
row = summary_row(page, "retrig-classify, 1 against 3 replicas")
check("2.93" in row and "50 ms" in row and row.endswith("| met |"), f"scaling row: {row}")
row = summary_row(page, "adaptive verdicts, uniform mix")
check("(20,000 simulated failures" in row and "accuracy 0.985" in row and "recall 0.934" in row
      and "intermittents called regression 0.5%" in row and "retriggers/failure 2.62" in row
      and "rounds/failure <= 1.3" in row and row.endswith("| met |"), f"simulate uniform row: {row}")
row = summary_row(page, "adaptive verdicts, observed mix")
check("accuracy 0.940" in row and "**not met**" in row, f"simulate observed row (0.94 < 0.95): {row}")
row = summary_row(page, "adaptive against seed")
check("uniform: accuracy 0.985 (seed 0.891, mozci 0.959), retriggers 2.62 (seed 5.00)" in row
      and row.endswith("| met |"), f"adaptive against seed row: {row}")
row = summary_row(page, "seed: intermittents failing 15% / 50%")
check("17.0% / 80.9%" in row and row.endswith("| met |"), f"seed known figures row: {row}")
check("### `build-bench/bench/bench_simulate`" in page and "| policy | accuracy |" in page,
      "simulate's tables shown")
row = summary_row(page, "culprit search, simulated")
check("96.9%" in row and "100,000 searches" in row and "91.4%" in row and row.endswith("| met |"),
      f"culprit correctness row: {row}")
row = summary_row(page, "culprit search: probing rounds")
check("97.9% of searches" in row and "100.0% not counting reruns" in row
      and "**not met**" in row, f"culprit rounds row: {row}")
row = summary_row(page, "culprit search: jobs")
check("0.34" in row and row.endswith("| met |"), f"culprit jobs row: {row}")
check("### `build-bench/bench/bench_culprit`" in page and "| all | 100000 | 96.9% |" in page,
      "culprit output shown")
row = summary_row(page, "errorsummary parsing")
check("lookups 8.10 ms/MB" in row and "against 2.50 ms/MB" in row and "3.24 x" in row
      and "**not met**" in row, f"errorsummary row: {row}")
check("Benchmarks that did not finish: bench_scaling." in page, "failed benchmark named")
check("at commit `abc1234`" in page, "commit stated")
check(re.search(r"- \d+ cores: ", page) is not None, "machine section")
check("### `build-bench/bench/bench_classify`" in page, "commands listed")
check("figure: " not in page and '"level":"info"' not in page, "machine lines hidden")
check(page.rstrip().endswith("Hand-written: what limits the figures."), "notes appended")

# Every key the report reads is printed by a benchmark.
report_src = REPORT.read_text()
bench_src = "".join(p.read_text() for p in (SOURCE / "tests" / "bench").glob("bench_*.c"))
for key in sorted(set(re.findall(r'g\("([a-z_]+)"\)', report_src))):
    check(f"figure: {key} " in bench_src, f"no benchmark prints figure {key}")
for prefix in ("history_%s_ms.", "rss_peak_mb.", "simulate.%s.%s.%s ", "simulate.seed_at_",
               "errorsummary_ms_per_mb."):
    check(f"figure: {prefix}" in bench_src, f"no benchmark prints {prefix}*")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures) == 0 and 'all' or len(failures)} checks {'passed' if not failures else 'failed'}")
sys.exit(1 if failures else 0)
