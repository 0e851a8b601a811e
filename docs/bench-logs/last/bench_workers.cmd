build-bench/bench/bench_workers
