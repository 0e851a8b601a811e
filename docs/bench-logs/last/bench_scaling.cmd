build-bench/bench/bench_scaling
