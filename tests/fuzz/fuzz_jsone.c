/* SPDX-License-Identifier: MPL-2.0 */
/* fuzz_jsone.c - libFuzzer target for the JSON-e renderer (common/core/jsone.h): the input is
 * a JSON template, a NUL byte, and a JSON context (an object, else {}). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core/jsone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t template_len = nul ? (size_t)(nul - text) : size;
    json_t *template = json_loadb(text, template_len, JSON_DECODE_ANY, NULL);
    json_t *context = nul ? json_loadb(nul + 1, size - template_len - 1, 0, NULL) : NULL;
    if (template) {
        json_t *out = NULL;
        char errstr[RT_ERRSTR_SIZE];
        if (rt_jsone_render(template, json_is_object(context) ? context : NULL, &out, errstr) ==
            RT_OK) {
            char *dumped = json_dumps(out, JSON_ENCODE_ANY);
            free(dumped);
        }
        json_decref(out);
    }
    json_decref(template);
    json_decref(context);
    return 0;
}
