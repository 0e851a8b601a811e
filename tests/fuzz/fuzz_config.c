/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_config.c - libFuzzer target for the configuration file parser. */
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        rt_log_set_level(RT_LOG_ERROR);
        quiet = 1;
    }
    rt_config cfg;
    char errstr[RT_ERRSTR_SIZE];
    if (rt_config_defaults(&cfg, errstr) == RT_OK)
        (void)rt_config_parse_text(&cfg, (const char *)data, size, "fuzz", errstr);
    rt_config_free(&cfg);
    return 0;
}
