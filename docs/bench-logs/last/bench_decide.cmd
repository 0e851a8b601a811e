build-bench/bench/bench_decide
