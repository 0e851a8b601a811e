/* SPDX-License-Identifier: MPL-2.0 */
/* jsone.h - a JSON-e renderer (https://json-e.js.org) for the subset decision tasks'
 * actions.json hookPayload templates use, over jansson values.
 *
 * Implemented, following the JSON-e reference implementation (JavaScript) exactly:
 *   - rendering of every JSON type, `${expr}` interpolation in strings and object keys
 *     (`$${` escapes it; null interpolates as "", arrays/objects are an error), `$$key`
 *     escaping of operator-like keys, keys matching ^\$[a-zA-Z][a-zA-Z0-9]*$ are reserved;
 *   - operators $eval, $if/then/else (a missing branch deletes the value from its parent
 *     object or array), $json (sorted keys, compact) and $let/in;
 *   - expressions: number/string/true/false/null literals, array and object literals,
 *     context names, `a.b`, `a["b"]`, `a[i]` (negative counts from the end), unary ! - +,
 *     ** * / + - < <= > >= == != (deep equality) in && || with JSON-e's truthiness
 *     (null, false, 0, "", [] and {} are false) and short-circuit.
 * Everything else - the other operators ($map, $flatten, $merge, $fromNow, $sort, ...),
 * function calls, built-ins (len, now, ...) and slices - is an RT_EPROTO error naming what
 * was not supported, never a silently different result. Numbers that are integral after
 * arithmetic become JSON integers (JavaScript has one number type).
 *
 * Number literals are read whole (at most 1,024 characters) and rounded to the nearest
 * double, as JavaScript does; one a double cannot hold is an RT_EPROTO error.
 * Untrusted input: template nesting, expression nesting, string sizes, the size of the
 * result and the total work are capped (RT_ETOOBIG). Pure: no I/O, no clock, no globals;
 * thread-safe as long as the inputs are not modified meanwhile. */
#ifndef RETRIG_COMMON_JSONE_H
#define RETRIG_COMMON_JSONE_H

#include <jansson.h>

#include "common/core/errors.h"

#define RT_JSONE_MAX_DEPTH  256                 /* template and value nesting */
#define RT_JSONE_MAX_STRING (4 * 1024 * 1024)   /* bytes of a string made while rendering */
#define RT_JSONE_MAX_TEXT   (64 * 1024 * 1024)  /* bytes of all strings made, and in the result */
#define RT_JSONE_MAX_NODES  1000000             /* values in the result */
#define RT_JSONE_MAX_STEPS  (20L * 1000 * 1000) /* work budget of one render */

/* Renders template with context (an object whose keys are identifiers; NULL: {}). On
 * success *out is a new value owned by the caller, sharing nothing with the inputs; a
 * template that deletes itself (a top-level $if without the branch taken) renders as
 * null. Errors: RT_EPROTO (invalid or unsupported template, evaluation error), RT_ETOOBIG,
 * RT_ENOMEM; *out is NULL and errstr (RT_ERRSTR_SIZE, may be NULL) says why. */
RT_MUSTCHECK int rt_jsone_render(const json_t *template, const json_t *context, json_t **out,
                                 char *errstr);

#endif
