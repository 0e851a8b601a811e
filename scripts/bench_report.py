#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
"""Writes docs/BENCHMARKS.md from one run of scripts/bench.

usage: bench_report.py OUTDIR OUT.md NOTES.md [SCALEDIR]

OUTDIR holds what scripts/bench collected: one <bench>.log per benchmark (its printed
output, including the `figure: <key> <number>` lines the benchmarks print for this report),
<bench>.status (its exit status), <bench>.cmd (the command line), and meta.txt
(`key: value` lines: date, commit, build type). The page states the machine, the commands,
a summary of every figure against its target, each benchmark's own output, and then
NOTES.md (hand-written: what limits each figure), verbatim. SCALEDIR, when given and it
holds a bench_history.log, is a separate run of bench_history at Firefox scale
(`scripts/bench --history-scale`): its figures get rows of their own and its output a section.
"""

import os
import platform
import re
import subprocess
import sys

BENCHES = ["bench_classify", "bench_decide", "bench_scaling", "bench_history", "bench_workers",
           "bench_simulate", "bench_culprit", "bench_errorsummary"]


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def figures_of(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^figure: (\S+) (-?[0-9.]+)\s*$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def machine():
    cpu = "unknown CPU"
    for line in read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    debian = read("/etc/debian_version").strip() or "?"
    packages = []
    try:
        res = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "rabbitmq-server",
             "redis-server", "postgresql-15", "libjansson4", "librabbitmq4", "libpq5",
             "libhiredis0.14", "libcurl4"],
            capture_output=True, text=True, check=False)
        packages = [p for p in res.stdout.splitlines() if p.strip()]
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB" if mem_kb else "?",
        "os": f"Debian {debian}, Linux {platform.release()}",
        "packages": packages,
    }


def fmt(value, unit="", decimals=0):
    if value is None:
        return "not measured"
    text = f"{value:,.{decimals}f}"
    return f"{text} {unit}".strip()


def pct(value):
    return "not measured" if value is None else f"{value:.1f}%"


def verdict(ok, target="?"):
    if ok is None:
        return "?" if target else ""
    return "met" if ok else "**not met**"


def main():
    if len(sys.argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    outdir, out_path, notes_path = sys.argv[1:4]
    scaledir = sys.argv[4] if len(sys.argv) == 5 else None
    scale_log = read(os.path.join(scaledir, "bench_history.log")) if scaledir else ""
    scale_meta = {}
    if scale_log:
        for line in read(os.path.join(scaledir, "meta.txt")).splitlines():
            if ": " in line:
                k, v = line.split(": ", 1)
                scale_meta[k] = v
    meta = {}
    for line in read(os.path.join(outdir, "meta.txt")).splitlines():
        if ": " in line:
            k, v = line.split(": ", 1)
            meta[k] = v
    logs, status, cmds, fig = {}, {}, {}, {}
    for b in BENCHES:
        logs[b] = read(os.path.join(outdir, b + ".log"))
        status[b] = read(os.path.join(outdir, b + ".status")).strip()
        cmds[b] = read(os.path.join(outdir, b + ".cmd")).strip()
        fig.update(figures_of(logs[b]))
    g = fig.get
    m = machine()

    rows = []

    def row(measure, figure, target, ok):
        rows.append(f"| {measure} | {figure} | {target} | {verdict(ok, target)} |")

    raw, comp, ratio = g("classify_raw_msgs_per_s"), g("classify_completed_msgs_per_s"), g(
        "classify_ratio")
    row("retrig-classify, completed path, against the broker's raw consume + ack",
        f"{fmt(comp, 'msg/s')} against {fmt(raw, 'msg/s')}: ratio {fmt(ratio, '', 2)}",
        ">= 10,000 msg/s and ratio >= 0.80",
        None if comp is None or ratio is None else comp >= 10000 and ratio >= 0.8)
    elig = g("classify_eligible_msgs_per_s")
    row("retrig-classify, eligible path (fake upstream)", fmt(elig, "msg/s"), ">= 500 msg/s",
        None if elig is None else elig >= 500)
    p50, p99 = g("decide_p50_ms"), g("decide_p99_ms")
    row("decision latency, last log parsed to decision row",
        f"p50 {fmt(p50, 'ms')}, p99 {fmt(p99, 'ms')}"
        + (f" ({fmt(g('decide_sets'))} sets, logs parsed within {fmt(g('decide_window_ms'), 'ms')})"
           if g("decide_sets") else ""),
        "p99 < 2,000 ms", None if p99 is None else p99 < 2000)
    def history_rows(fg, label):
        ing, cp, iratio = fg("history_ingest_rows_per_s"), fg("history_copy_rows_per_s"), fg(
            "history_ingest_ratio")
        outcomes = fg("history_outcomes")
        where = f" ({fmt(outcomes)} outcomes, {fmt(fg('history_days'))} days)" if outcomes else ""
        row(f"test history ingest against raw COPY{label}{where}",
            f"{fmt(ing, 'rows/s')} against {fmt(cp, 'rows/s')}: ratio {fmt(iratio, '', 2)}",
            "ratio >= 0.5", None if iratio is None else iratio >= 0.5)
        rr, both = fg("history_rollup_rows_per_s"), fg("history_ingest_with_rollup_ratio")
        if rr is not None:
            row(f"the per-day rollup behind the writer{label}",
                f"{fmt(rr, 'rows/s')}; writer and rollup together: ratio {fmt(both, '', 2)} of COPY",
                "", None)
        queries = sorted((k[len("history_query_ms."):], v) for k, v in fg_items(fg)
                         if k.startswith("history_query_ms."))
        if queries:
            slowest = max(queries, key=lambda kv: kv[1])
            row(f"dashboard queries{label} (slowest of {len(queries)})",
                f"{fmt(slowest[1], 'ms')} (`{slowest[0]}`)", "< 1,000 ms each", slowest[1] < 1000)
        else:
            row(f"dashboard queries{label}", "not measured", "< 1,000 ms each", None)
        commands = dict((k[len("history_command_ms."):], v) for k, v in fg_items(fg)
                        if k.startswith("history_command_ms."))
        if commands:
            flakes = commands.get("retrig_flakes_project_gecko_format_json")
            report = commands.get("retrig_report_project_gecko")
            row(f"the dashboard's commands{label}",
                f"`retrig flakes` {fmt(flakes, 'ms')}, `retrig report` {fmt(report, 'ms')}",
                "retrig report < 3,000 ms", None if report is None else report < 3000)
        ret = fg("history_retention_ms")
        if ret is not None:
            row(f"retention of one day's partitions{label}", fmt(ret, "ms"), "< 1,000 ms",
                ret < 1000)
        bpo, rbpo = fg("history_bytes_per_outcome"), fg("history_rollup_bytes_per_outcome")
        if bpo is not None:
            row(f"disk per outcome{label}",
                f"{fmt(bpo, 'bytes')} in the outcome tables, {fmt(rbpo, 'bytes')} in the rollup",
                "", None)

    def fg_items(fg):
        return fg.items_source()

    class Figures:
        def __init__(self, d):
            self.d = d

        def __call__(self, key):
            return self.d.get(key)

        def items_source(self):
            return self.d.items()

    history_rows(Figures(fig), " at the default size")
    scale_fig = figures_of(scale_log) if scale_log else {}
    if scale_fig:
        history_rows(Figures(scale_fig), " at Firefox scale")
    rss = sorted((k[len("rss_peak_mb."):], v) for k, v in fig.items()
                 if k.startswith("rss_peak_mb."))
    if rss:
        row("peak resident memory per worker (VmHWM)",
            ", ".join(f"{name} {v:.1f} MB" for name, v in rss),
            "retrig-classify < 20 MB",
            all(v < 20 for name, v in rss if name.startswith("retrig-classify")))
    else:
        row("peak resident memory per worker", "not measured", "retrig-classify < 20 MB", None)
    one, many, sratio = g("scaling_one_msgs_per_s"), g("scaling_many_msgs_per_s"), g(
        "scaling_ratio")
    n = int(g("scaling_replicas") or 3)
    row(f"retrig-classify, 1 against {n} replicas"
        + (f" ({fmt(g('scaling_latency_ms'), 'ms')} upstream latency)"
           if g("scaling_latency_ms") is not None else ""),
        f"{fmt(one, 'msg/s', 1)} against {fmt(many, 'msg/s', 1)}: ratio {fmt(sratio, '', 2)}",
        ">= 2.5", None if sratio is None else sratio >= 2.5)

    def sim(mix, policy, measure):
        return g(f"simulate.{mix}.{policy}.{measure}")

    def share(v):
        return "not measured" if v is None else f"{v * 100:.1f}%"

    def sim_row(mix, targets):
        """targets: (measure, label, op, bound), checked on adaptive's figures."""
        shown, checks, wanted = [], [], []
        for measure, label, op, bound in targets:
            v = sim(mix, "adaptive", measure)
            as_share = measure == "false_regression"
            shown.append(f"{label} " + (share(v) if as_share else
                                        fmt(v, "", 2 if measure in ("retriggers", "rounds") else 3)))
            wanted.append(f"{label} {op} " + (f"{bound * 100:g}%" if as_share else f"{bound:g}"))
            checks.append(None if v is None else (v >= bound if op == ">=" else v <= bound))
        row(f"adaptive verdicts, {mix} mix ({fmt(g('simulate.cases'))} simulated failures, "
            "15% regressions)", ", ".join(shown), ", ".join(wanted),
            None if None in checks else all(checks))

    sim_row("uniform", [("accuracy", "accuracy", ">=", 0.97), ("recall", "recall", ">=", 0.92),
                        ("false_regression", "intermittents called regression", "<=", 0.02),
                        ("retriggers", "retriggers/failure", "<=", 2.75),
                        ("rounds", "rounds/failure", "<=", 1.3)])
    sim_row("observed", [("accuracy", "accuracy", ">=", 0.95),
                         ("retriggers", "retriggers/failure", "<=", 4.5),
                         ("rounds", "rounds/failure", "<=", 1.6)])
    beats, oks = [], []
    for mix in ("uniform", "observed"):
        acc = {p: sim(mix, p, "accuracy") for p in ("seed", "adaptive", "mozci")}
        ra, rs = sim(mix, "adaptive", "retriggers"), sim(mix, "seed", "retriggers")
        beats.append(f"{mix}: accuracy {fmt(acc['adaptive'], '', 3)} (seed "
                     f"{fmt(acc['seed'], '', 3)}, mozci {fmt(acc['mozci'], '', 3)}), "
                     f"retriggers {fmt(ra, '', 2)} (seed {fmt(rs, '', 2)})")
        oks.append(None if None in (acc["adaptive"], acc["seed"], ra, rs)
                   else acc["adaptive"] > acc["seed"] and ra < rs)
    row("adaptive against seed on the same failures", "; ".join(beats),
        "more accurate with fewer retriggers, both mixes", None if None in oks else all(oks))
    s15, s50 = g("simulate.seed_at_15.false_regression"), g("simulate.seed_at_50.false_regression")
    row("seed: intermittents failing 15% / 50% of the time called regression",
        f"{share(s15)} / {share(s50)}", "binomial 16.5% / 81.25%, within 1.5 points",
        None if None in (s15, s50) else abs(s15 - 0.1648) < 0.015 and abs(s50 - 0.8125) < 0.015)
    correct, trusted = g("culprit_correct_pct"), g("culprit_trusted_correct_pct")
    row("culprit search, simulated with known truth: culprit named correctly"
        + (f" ({fmt(g('culprit_cases'))} searches; {pct(trusted)} when the known-good push is "
           "trusted as a linear backfill does)" if g("culprit_cases") else ""),
        pct(correct), ">= 95%", None if correct is None else correct >= 95)
    within, aside = g("culprit_rounds_within_bound_pct"), g(
        "culprit_rounds_within_bound_reruns_aside_pct")
    row("culprit search: probing rounds at most ceil(log2(skipped pushes + 1))",
        f"{pct(within)} of searches"
        + (f" ({pct(aside)} not counting reruns of ambiguous probes)"
           if aside is not None and aside != within else ""),
        "every search", None if within is None else within >= 100)
    jobs = g("culprit_jobs_ratio")
    row("culprit search: jobs against a linear backfill of the skipped pushes with the same "
        "times", fmt(jobs, "", 2), "<= 0.40", None if jobs is None else jobs <= 0.40)
    a_correct, a_within = g("culprit_adaptive_correct_pct"), g(
        "culprit_adaptive_rounds_within_bound_pct")
    a_jobs, a_mean, s_mean = g("culprit_adaptive_jobs_ratio"), g("culprit_adaptive_jobs_mean"), g(
        "culprit_jobs_mean")
    row("culprit search with the probes classified by the adaptive verdict's model "
        "(decide_policy = adaptive): correct, rounds within the bound, jobs against linear",
        f"{pct(a_correct)}, {pct(a_within)}, {fmt(a_jobs, '', 2)} "
        f"({fmt(a_mean, '', 1)} jobs a search; seed rule {fmt(s_mean, '', 1)})",
        ">= 95%, every search, <= 0.40",
        None if None in (a_correct, a_within, a_jobs)
        else a_correct >= 95 and a_within >= 100 and a_jobs <= 0.40)
    es_real, es_worst = g("errorsummary_real_ms_per_mb"), g("errorsummary_worst_ratio")
    crafted = sorted((k[len("errorsummary_ms_per_mb."):], v) for k, v in fig.items()
                     if k.startswith("errorsummary_ms_per_mb.") and not k.endswith(".real"))
    row("errorsummary parsing, worst crafted inputs against a real errorsummary of the same size",
        (", ".join(f"{name} {fmt(v, 'ms/MB', 2)}" for name, v in crafted)
         + f" against {fmt(es_real, 'ms/MB', 2)}: worst {fmt(es_worst, 'x', 2)}")
        if es_worst is not None else "not measured",
        "<= 3x", None if es_worst is None else es_worst <= 3)

    failed = [b for b in BENCHES if status.get(b) not in ("0", "")]
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by `bash scripts/bench` (scripts/bench_report.py); edit "
        "docs/benchmark-notes.md instead. -->",
        "",
        f"Measured {meta.get('date', '?')} at commit `{meta.get('commit', '?')}`, "
        f"{meta.get('build', 'RelWithDebInfo')} build, by `bash scripts/bench`. Benchmarks "
        "are not tests: nothing in CI passes or fails on them.",
        "",
        "## Machine",
        "",
        f"- {m['cores']} cores: {m['cpu']}; {m['memory']} of memory",
        f"- {m['os']}",
        "- RabbitMQ, Redis and Postgres from Debian on loopback (`deploy/local/services.sh`), "
        "the fake upstream in Python (`tests/fake-upstream/`)",
    ]
    if meta.get("postgres"):
        lines.append(f"- Postgres settings: {meta['postgres']}")
    if m["packages"]:
        lines.append("- packages: " + ", ".join(f"`{p}`" for p in m["packages"]))
    lines += ["", "## Summary", "", "| measure | figure | target | |", "| --- | --- | --- | --- |"]
    lines += rows
    if failed:
        lines += ["", "Benchmarks that did not finish: " + ", ".join(failed) + "."]
    lines += ["", "## Commands and their output", ""]
    lines.append("`bash scripts/bench` starts the local services, builds an optimised tree "
                 "(`build-bench`) and runs, in turn:")
    lines.append("")
    for b in BENCHES:
        if not cmds.get(b):
            continue
        lines += [f"### `{cmds[b]}`", "", f"exit status {status.get(b) or '?'}", "", "```"]
        shown = [l for l in logs[b].splitlines()
                 if not l.startswith("figure: ") and not l.startswith("{\"ts\"")]
        lines += shown[-60:]
        lines += ["```", ""]
    if scale_log:
        cmd = read(os.path.join(scaledir, "bench_history.cmd")).strip()
        status_scale = read(os.path.join(scaledir, "bench_history.status")).strip()
        lines += [f"### `{cmd}` (at Firefox scale: `bash scripts/bench --history-scale`)", "",
                  f"Measured {scale_meta.get('date', '?')} at commit "
                  f"`{scale_meta.get('commit', '?')}`; exit status {status_scale or '?'}."
                  + (f" Postgres: {scale_meta['postgres']}." if scale_meta.get("postgres") else ""),
                  "",
                  "```"]
        shown = [l for l in scale_log.splitlines()
                 if not l.startswith("figure: ") and not l.startswith("{\"ts\"")
                 and not l.startswith("fake-upstream:") and not l.startswith("bench_history: ")]
        lines += shown[-60:]
        lines += ["```", ""]
    notes = read(notes_path).strip()
    if notes:
        lines += [notes, ""]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
