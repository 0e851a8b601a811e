/* SPDX-License-Identifier: MPL-2.0 */
/* message_fields.h - internal to the core: the member readers that the parsers of our queue
 * messages share (messages.c defines them; events.c uses them). Pure. */
#ifndef RETRIG_COMMON_CORE_MESSAGE_FIELDS_H
#define RETRIG_COMMON_CORE_MESSAGE_FIELDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The JSON object of a message: at most 1 MiB, no duplicate member, "version": 1; NULL with
 * reason ("too-big", "invalid-json", "wrong-type:body", "missing-field:version", ...). */
json_t *rt__message_load(const char *body, size_t len, char *reason);
/* String member key: present, a string, valid (when valid is not NULL) and shorter than size
 * (when out is not NULL), copied to out and/or strdup'ed into *dup. RT_EPROTO with reason. */
int rt__message_string(json_t *root, const char *key, bool (*valid)(const char *), char *out,
                       size_t size, char **dup, char *reason);
/* Integer member key within [min, max]. RT_EPROTO with reason. */
int rt__message_int(json_t *root, const char *key, long long min, long long max, long long *out,
                    char *reason);
/* RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.fraction] then Z or +HH:MM / -HH:MM. */
bool rt__message_valid_time(const char *s);

#endif
