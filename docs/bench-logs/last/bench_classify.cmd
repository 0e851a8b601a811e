build-bench/bench/bench_classify
