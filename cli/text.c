/* SPDX-License-Identifier: MPL-2.0 */
/* text.c - stored and upstream text made safe for the terminal in the CLI's tables
 * (rt_utf8_printable): a ring of buffers, so that a printf may take several at once. */
#include <stdlib.h>

#include "cli/cli.h"
#include "common/core/utf8.h"

#define RING 32 /* more than any printf of the CLI takes */

static char *g_ring[RING];
static size_t g_next;

static void free_ring(void)
{
    for (size_t i = 0; i < RING; i++) {
        free(g_ring[i]);
        g_ring[i] = NULL;
    }
}

const char *rt_cli_text(const char *s)
{
    static int registered;
    if (!s) return "-";
    if (!registered) registered = atexit(free_ring) == 0;
    size_t slot = g_next++ % RING;
    free(g_ring[slot]);
    g_ring[slot] = rt_utf8_printable(s);
    return g_ring[slot] ? g_ring[slot] : "(out of memory)";
}
