build-bench/bench/bench_errorsummary
