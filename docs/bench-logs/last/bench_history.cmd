build-bench/bench/bench_history --outcomes 1000000
