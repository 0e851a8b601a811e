build-bench/bench/bench_simulate
