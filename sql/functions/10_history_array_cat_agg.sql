-- SPDX-License-Identifier: MPL-2.0
-- 10_history_array_cat_agg.sql - the aggregate history_array_cat_agg as it stands: `retrig
-- migrate` applies it whenever this file changes (sql/functions/README.md). Until the functions
-- left the migrations, it was last defined by migrations/0031_history_flakes_rollup_reads.sql.

-- Concatenates arrays (text[] of pushes, integer[] of pull requests) over the rows of a group.
CREATE OR REPLACE AGGREGATE history_array_cat_agg(anycompatiblearray) (
    SFUNC = array_cat,
    STYPE = anycompatiblearray
);
COMMENT ON AGGREGATE history_array_cat_agg(anycompatiblearray) IS
    'The concatenation of the arrays of a group (history_flakes_rollup: a test''s pushes and pull requests over the days of a window, counted distinct afterwards).';
