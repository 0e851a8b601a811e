/* SPDX-License-Identifier: MPL-2.0 */
/* rows.c - reads result rows into typed structs by a table of fields (rows.h). */
#include "common/store/rows.h"

#include <stdlib.h>
#include <string.h>

#include "common/io/log.h"

static int read_field(const PGresult *res, int row, int col, const rt_row_field *f, char *base)
{
    void *at = base + f->offset;
    switch (f->type) {
    case RT_ROW_TEXT:
    case RT_ROW_TEXT_NULL: {
        const char *text = rt_pg_text(res, row, col);
        char *copy = NULL;
        if (text || f->type == RT_ROW_TEXT) {
            copy = strdup(text ? text : "");
            if (!copy) return RT_ENOMEM;
        }
        memcpy(at, &copy, sizeof copy);
        return RT_OK;
    }
    case RT_ROW_INT: {
        long long v = rt_pg_int(res, row, col);
        memcpy(at, &v, sizeof v);
        return RT_OK;
    }
    case RT_ROW_FLOAT: {
        double v = rt_pg_float(res, row, col);
        memcpy(at, &v, sizeof v);
        return RT_OK;
    }
    case RT_ROW_BOOL: {
        bool v = rt_pg_bool(res, row, col);
        memcpy(at, &v, sizeof v);
        return RT_OK;
    }
    }
    return RT_EINVAL;
}

void rt_store_rows_free(const rt_row_spec *spec, void *rows, size_t n)
{
    if (!rows) return;
    for (size_t i = 0; i < n; i++) {
        char *base = (char *)rows + i * spec->size;
        for (size_t k = 0; k < spec->nfields; k++) {
            if (spec->fields[k].type != RT_ROW_TEXT && spec->fields[k].type != RT_ROW_TEXT_NULL)
                continue;
            char *text;
            memcpy(&text, base + spec->fields[k].offset, sizeof text);
            free(text);
        }
    }
    free(rows);
}

int rt_store_rows_read(const PGresult *res, const rt_row_spec *spec, void *out, size_t *n)
{
    void *none = NULL;
    memcpy(out, &none, sizeof none);
    *n = 0;
    if (spec->nfields > RT_ROW_MAX_FIELDS) return RT_EINVAL;
    const char *names[RT_ROW_MAX_FIELDS];
    int cols[RT_ROW_MAX_FIELDS];
    for (size_t k = 0; k < spec->nfields; k++) names[k] = spec->fields[k].column;
    char errstr[RT_ERRSTR_SIZE] = "";
    if (rt_pg_columns(res, names, spec->nfields, cols, errstr) != RT_OK) {
        rt_log_error("a statement and its reader disagree", "error", errstr);
        return RT_EDB;
    }
    size_t rows = (size_t)PQntuples(res);
    char *array = calloc(rows + 1, spec->size);
    if (!array) return RT_ENOMEM;
    /* Every text is written (NULL until read), so a partial array frees cleanly. */
    for (size_t i = 0; i < rows; i++) {
        for (size_t k = 0; k < spec->nfields; k++) {
            if (read_field(res, (int)i, cols[k], &spec->fields[k], array + i * spec->size) !=
                RT_OK) {
                rt_store_rows_free(spec, array, i + 1);
                return RT_ENOMEM;
            }
        }
    }
    memcpy(out, &array, sizeof array);
    *n = rows;
    return RT_OK;
}

int rt_store_rows(rt_pg *pg, const char *sql, int nparams, const char *const *params,
                  const rt_row_spec *spec, void *out, size_t *n)
{
    void *none = NULL;
    memcpy(out, &none, sizeof none);
    *n = 0;
    PGresult *res = NULL;
    int rc = rt_pg_exec(pg, sql, nparams, params, &res);
    if (rc != RT_OK) return rc;
    rc = rt_store_rows_read(res, spec, out, n);
    PQclear(res);
    return rc;
}
