build-bench/bench/bench_history --outcomes 50000000 --days 30
