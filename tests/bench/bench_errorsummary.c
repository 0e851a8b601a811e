/* SPDX-License-Identifier: MPL-2.0 */
/* bench_errorsummary.c - the cost of parsing an errorsummary per MB, for the worst inputs
 * (tests/support/crafted.h: long names, many groups, many duplicate look-ups) against a real
 * errorsummary grown to the same size (issue 20: 13.9 MB crafted took 35 s; target: every
 * crafted input within 3x of the real one). Pure core, no services. Prints, per input, the
 * best of five runs, and `figure:` lines for scripts/bench_report.py.
 *
 *   bench_errorsummary [--mb N]   (default 14) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/core/errorsummary.h"
#include "support/crafted.h"

#define RUNS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Best of RUNS parses of text, in ms per MB; the summary's facts of the last run. */
static double ms_per_mb(const char *text, size_t len, size_t *groups, int *too_big)
{
    static const rt_siphash_key key = {0x5eed5eed5eed5eedULL, 0x1234567890abcdefULL};
    double best = 1e300;
    for (int r = 0; r < RUNS; r++) {
        rt_errorsummary es;
        rt_errorsummary_init(&es, &key, 0, NULL, NULL);
        double start = now();
        if (rt_errorsummary_add(&es, text, len) != RT_OK) {
            fprintf(stderr, "bench_errorsummary: parse failed\n");
            exit(1);
        }
        double ms = (now() - start) * 1000.0 / ((double)len / 1e6);
        if (ms < best) best = ms;
        *groups = es.ngroups;
        *too_big = es.too_big;
        rt_errorsummary_free(&es);
    }
    return best;
}

int main(int argc, char **argv)
{
    long mb = 14;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc) {
            mb = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_errorsummary [--mb N]\n");
            return 2;
        }
    }
    if (mb < 1 || mb > 60) {
        fprintf(stderr, "bench_errorsummary: --mb wants 1..60\n");
        return 2;
    }
    printf("errorsummary parsing, %ld MB inputs, best of %d runs\n", mb, RUNS);
    printf("%-12s %10s %10s %8s %8s %6s\n", "input", "bytes", "ms/MB", "MB/s", "groups", "ratio");
    double real = 0, worst = 0;
    for (int k = RT_CRAFTED_REAL; k <= RT_CRAFTED_LOOKUPS; k++) {
        size_t len = 0, groups = 0;
        int too_big = 0;
        char *text = rt_crafted_errorsummary((rt_crafted_kind)k, (size_t)mb << 20, &len);
        double ms = ms_per_mb(text, len, &groups, &too_big);
        free(text);
        if (k == RT_CRAFTED_REAL) real = ms;
        double ratio = ms / real;
        if (k != RT_CRAFTED_REAL && ratio > worst) worst = ratio;
        printf("%-12s %10zu %10.2f %8.1f %8zu %6.2f%s\n", rt_crafted_name((rt_crafted_kind)k), len,
               ms, 1000.0 / ms, groups, ratio, too_big ? " (too big)" : "");
        printf("figure: errorsummary_ms_per_mb.%s %.3f\n", rt_crafted_name((rt_crafted_kind)k), ms);
    }
    printf("worst crafted input: %.2fx the real errorsummary's cost per MB (target <= 3)\n", worst);
    printf("figure: errorsummary_real_ms_per_mb %.3f\n", real);
    printf("figure: errorsummary_worst_ratio %.3f\n", worst);
    return 0;
}
