build-bench/bench/bench_culprit
