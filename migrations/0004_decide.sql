-- SPDX-License-Identifier: MPL-2.0
-- 0004_decide.sql - what retrig-decide adds: when the deadline sweeper last asked for a
-- decision on a set, and two views that answer sheriffs' usual questions without joins.

ALTER TABLE retrigger_sets ADD COLUMN deadline_requested_at timestamptz;
COMMENT ON COLUMN retrigger_sets.deadline_requested_at IS
    'When retrig-decide''s deadline sweeper last asked for a decision on this set (it was still undecided past set_deadline_minutes); NULL when never.';

-- The decisions of the last 7 days, newest first, with the push and a one-line summary of
-- the failure lines and how many retriggers reproduced each.
CREATE VIEW recent_decisions AS
SELECT d.set_id, d.verdict, d.reason, s.project, s.revision, s.label, s.platform,
       s.original_task_id, s.original_run_id, d.classification_id, d.failure_seen_at,
       d.retriggers_requested_at, d.decided_at,
       (SELECT string_agg(format('%s/%s %s', l.value ->> 'reproduced',
                                 d.evidence -> 'counts' ->> 'compared', l.value ->> 'line'),
                          E'\n' ORDER BY l.ordinality)
          FROM jsonb_array_elements(CASE jsonb_typeof(d.evidence -> 'lines')
                                    WHEN 'array' THEN d.evidence -> 'lines'
                                    ELSE '[]'::jsonb END) WITH ORDINALITY AS l (value, ordinality)
       ) AS lines_reproduced
  FROM decisions d
  JOIN retrigger_sets s ON s.id = d.set_id
 WHERE d.decided_at > now() - interval '7 days'
 ORDER BY d.decided_at DESC;
COMMENT ON VIEW recent_decisions IS
    'Decisions of the last 7 days, newest first: verdict, reason, push, label, original task, and lines_reproduced: one line per failure line of the original run, "<retriggers reproducing it>/<retriggers compared> <line>".';

-- Regressions per push: which labels regressed on which revision.
CREATE VIEW open_regressions_by_push AS
SELECT s.project, s.revision, count(*) AS regressions,
       array_agg(s.label ORDER BY s.label) AS labels,
       array_agg(s.original_task_id ORDER BY s.label) AS original_task_ids,
       min(d.failure_seen_at) AS first_failure_seen_at, max(d.decided_at) AS last_decided_at
  FROM decisions d
  JOIN retrigger_sets s ON s.id = d.set_id
 WHERE d.verdict = 'regression'
   AND (d.classification_id IS NULL OR d.classification_id IN (1, 6))
 GROUP BY s.project, s.revision
 ORDER BY max(d.decided_at) DESC;
COMMENT ON VIEW open_regressions_by_push IS
    'Regressions grouped by push (project, revision): how many labels regressed, which, and when. Open: the original job was not classified by a sheriff when decided (classification 1 not classified or 6 new failure not classified).';

GRANT SELECT ON recent_decisions, open_regressions_by_push TO retrig_sheriff;
