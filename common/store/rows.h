/* SPDX-License-Identifier: MPL-2.0 */
/* rows.h - the store's reader of result rows into typed structs: a statement's rows become
 * an array of the caller's struct, one field per column named in a table (column name, type,
 * offset in the struct), so a store module states each query's row type once and reads it
 * in one call. For the store's modules only (common/store/): callers above the store see
 * the structs, never a result.
 *
 * Types: RT_ROW_TEXT (char *, malloc'd; "" for SQL NULL, as libpq reads it), RT_ROW_TEXT_NULL
 * (char *, NULL for SQL NULL), RT_ROW_INT (long long, 0 for NULL), RT_ROW_FLOAT (double, 0.0
 * for NULL), RT_ROW_BOOL (bool, true for 't'). Thread-safety: per rt_pg handle. */
#ifndef RETRIG_COMMON_STORE_ROWS_H
#define RETRIG_COMMON_STORE_ROWS_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>

#include "common/core/errors.h"
#include "common/io/pg.h"

typedef enum { RT_ROW_TEXT, RT_ROW_TEXT_NULL, RT_ROW_INT, RT_ROW_FLOAT, RT_ROW_BOOL } rt_row_type;

typedef struct rt_row_field {
    const char *column; /* as the SELECT names it */
    rt_row_type type;
    size_t offset; /* of the member in the row struct */
} rt_row_field;

#define RT_ROW_FIELD(row_type, member, type, column)                                               \
    {                                                                                              \
        column, type, offsetof(row_type, member)                                                   \
    }
#define RT_ROW_MAX_FIELDS 48

/* A row table: its fields and the size of its struct. */
typedef struct rt_row_spec {
    const rt_row_field *fields;
    size_t nfields;
    size_t size;
} rt_row_spec;

/* Runs sql with its text parameters and reads every row into *out, a calloc'd array of *n
 * structs (at least one, zeroed, so *out is never NULL on success). A column the result
 * lacks is RT_EDB (logged, as rt_pg_result_columns does). RT_OK, RT_EDB (rt_pg_errstr),
 * RT_ECONN, RT_ENOMEM; on failure *out is NULL and *n 0. */
RT_MUSTCHECK int rt_store_rows(rt_pg *pg, const char *sql, int nparams, const char *const *params,
                               const rt_row_spec *spec, void *out, size_t *n);
/* The same from a result already run (not cleared here). */
RT_MUSTCHECK int rt_store_rows_read(const PGresult *res, const rt_row_spec *spec, void *out,
                                    size_t *n);
/* Frees the rows' texts and the array; rows may be NULL. */
void rt_store_rows_free(const rt_row_spec *spec, void *rows, size_t n);

#endif
