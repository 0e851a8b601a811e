/* SPDX-License-Identifier: MPL-2.0 */
/* ids.c - identifier validation. */
#include "common/core/ids.h"

#include <string.h>

static bool slug_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

bool rt_valid_task_id(const char *s)
{
    if (!s || strlen(s) != 22) return false;
    for (const char *p = s; *p; p++)
        if (!slug_char(*p)) return false;
    return true;
}

bool rt_valid_project(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64 || s[0] == '.' || strstr(s, "..")) return false;
    for (const char *p = s; *p; p++)
        if (!slug_char(*p) && *p != '.') return false;
    return true;
}

bool rt_valid_revision(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 12 || n > 40) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
            return false;
    return true;
}

bool rt_valid_label(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 512 || s[0] == ' ' || s[n - 1] == ' ' || strstr(s, "..")) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) return false;
    return true;
}

bool rt_valid_task_queue_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 3 || n > 256 || strstr(s, "..")) return false;
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/')) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f) return false;
    return true;
}
