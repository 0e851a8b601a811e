-- SPDX-License-Identifier: MPL-2.0
-- 0015_culprit.sql - what a worker needs to run a culprit search (common/culprit.h) for a
-- regression and keep it on the decision: the search's state, the culprit once named, the
-- range that holds it, every probe and what it showed, the jobs spent; and the probes asked
-- of Gecko's add-new-jobs action, one row per (set, push), written before the hook is
-- called, so that a crash or a redelivery looks the action task up instead of calling
-- twice (the unique key is the backstop).
--
-- Exactly-once: the first request for a push is an INSERT ... ON CONFLICT ON CONSTRAINT
-- culprit_pending_probes_set_revision_key DO NOTHING; a later request for more runs on the
-- same push (an ambiguous probe) is a compare-and-set on its attempt,
-- UPDATE ... SET attempt = attempt + 1 ... WHERE set_id = $1 AND revision = $2 AND
-- attempt = $3 AND state IN ('done', 'dry-run'), so that a second worker, or the same
-- message redelivered, changes nothing.

ALTER TABLE decisions
    ADD COLUMN culprit_status      text CHECK (culprit_status IN ('searching', 'found',
                                                                  'culprit-before-window',
                                                                  'stopped')),
    ADD COLUMN culprit_reason      text,
    ADD COLUMN culprit_revision    text CHECK (culprit_revision ~ '^([0-9a-f]{12}|[0-9a-f]{40})$'),
    ADD COLUMN culprit_pushlog_id  bigint CHECK (culprit_pushlog_id > 0),
    ADD COLUMN culprit_author      text,
    ADD COLUMN culprit_range_first text CHECK (culprit_range_first ~ '^([0-9a-f]{12}|[0-9a-f]{40})$'),
    ADD COLUMN culprit_range_last  text CHECK (culprit_range_last ~ '^([0-9a-f]{12}|[0-9a-f]{40})$'),
    ADD COLUMN culprit_probes      jsonb NOT NULL DEFAULT '[]'::jsonb
                                   CHECK (jsonb_typeof(culprit_probes) = 'array'),
    ADD COLUMN culprit_jobs_spent  integer NOT NULL DEFAULT 0 CHECK (culprit_jobs_spent >= 0),
    ADD COLUMN culprit_started_at  timestamptz,
    ADD COLUMN culprit_updated_at  timestamptz,
    ADD CONSTRAINT decisions_culprit_regression_check
        CHECK (culprit_status IS NULL OR verdict = 'regression'),
    ADD CONSTRAINT decisions_culprit_found_check
        CHECK ((culprit_status IS NOT DISTINCT FROM 'found') = (culprit_revision IS NOT NULL));

CREATE INDEX decisions_culprit_searching_idx ON decisions (culprit_updated_at)
    WHERE culprit_status = 'searching';

COMMENT ON COLUMN decisions.culprit_status IS
    'The culprit search of a regression: searching (probes under way), found (culprit_revision caused it), culprit-before-window (the window''s first push reproduces too: the culprit is that push or an earlier one), stopped (culprit_reason says why, e.g. budget-exhausted; the culprit is within culprit_range_first..culprit_range_last). NULL: no search (not a regression, or its project is not in culprit_projects).';
COMMENT ON COLUMN decisions.culprit_reason IS
    'The search''s last reason code (common/culprit.h): bisect, more-runs, confirm-first, waiting, no-candidate, bisected, first-push-reproduces, budget-exhausted, ...';
COMMENT ON COLUMN decisions.culprit_revision IS
    'Head revision (12 or 40 hex digits) of the push that caused the regression; set exactly when culprit_status is found.';
COMMENT ON COLUMN decisions.culprit_pushlog_id IS 'Mercurial pushlog id of the culprit push (the id in route.tc-treeherder.v2.<project>.<revision>.<pushlog id>).';
COMMENT ON COLUMN decisions.culprit_author IS 'Author of the culprit push, as the pushlog gives it (user), for the sheriff''s message.';
COMMENT ON COLUMN decisions.culprit_range_first IS
    'Oldest push that may still be the culprit (the first push after the newest push known good); with culprit-before-window, or while no push of the window is known good, the window''s first push, meaning "it or an earlier one".';
COMMENT ON COLUMN decisions.culprit_range_last IS 'Newest push that may still be the culprit (the oldest push known to carry the regression; the failing push at first).';
COMMENT ON COLUMN decisions.culprit_probes IS
    'Every probe of the search, oldest first: [{"round", "revision", "pushlog_id", "times", "runs", "reproduced", "class", "confirm", "requested_at"}]: the round (1, 2, ...), the push, the runs asked for, the runs that gave evidence and those that reproduced the failure line, the push''s class after them (good, bad, open), whether it was the confirmation of the window''s first push, and when it was asked for.';
COMMENT ON COLUMN decisions.culprit_jobs_spent IS 'Jobs the search asked add-new-jobs for, summed over its probes (culprit_max_jobs bounds it).';
COMMENT ON COLUMN decisions.culprit_started_at IS 'When the culprit search started; NULL when there is none.';
COMMENT ON COLUMN decisions.culprit_updated_at IS 'When culprit_status, culprit_probes or the range last changed.';

CREATE TABLE culprit_pending_probes (
    set_id           bigint      NOT NULL REFERENCES decisions (set_id) ON DELETE CASCADE,
    revision         text        NOT NULL CHECK (revision ~ '^([0-9a-f]{12}|[0-9a-f]{40})$'),
    pushlog_id       bigint      CHECK (pushlog_id > 0),
    label            text        NOT NULL,
    round            integer     NOT NULL CHECK (round >= 1),
    attempt          integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    times            integer     NOT NULL CHECK (times BETWEEN 1 AND 100),
    confirm          boolean     NOT NULL DEFAULT false,
    decision_task_id text,
    payload          jsonb,
    dry_run          boolean     NOT NULL DEFAULT false,
    state            text        NOT NULL DEFAULT 'intent'
                                 CHECK (state IN ('intent', 'triggered', 'dry-run', 'done',
                                                  'failed')),
    action_task_id   text,
    error            text,
    intent_at        timestamptz NOT NULL DEFAULT now(),
    triggered_at     timestamptz,
    done_at          timestamptz,
    CONSTRAINT culprit_pending_probes_set_revision_key UNIQUE (set_id, revision)
);
CREATE INDEX culprit_pending_probes_open_idx ON culprit_pending_probes (intent_at)
    WHERE state IN ('intent', 'triggered');

COMMENT ON TABLE culprit_pending_probes IS
    'The add-new-jobs requests of culprit searches, one row per (set, push): pending while state is intent or triggered; kept once done, so that a request for more runs on the same push bumps attempt by a compare-and-set (see 0015_culprit.sql).';
COMMENT ON COLUMN culprit_pending_probes.set_id IS 'The retrigger set whose regression decision the search belongs to (decisions.set_id).';
COMMENT ON COLUMN culprit_pending_probes.revision IS 'Head revision of the probed push (12 or 40 hex digits).';
COMMENT ON COLUMN culprit_pending_probes.pushlog_id IS 'Mercurial pushlog id of the probed push; NULL when not known yet.';
COMMENT ON COLUMN culprit_pending_probes.label IS 'The task label add-new-jobs runs (input tasks: [label]): the failing task''s label.';
COMMENT ON COLUMN culprit_pending_probes.round IS 'The search round that asked for the current attempt (1 for the first probe of the search).';
COMMENT ON COLUMN culprit_pending_probes.attempt IS 'Requests made for this push: 1, then one more for each request for more runs (an ambiguous probe, or the runs of the first request that gave no evidence).';
COMMENT ON COLUMN culprit_pending_probes.times IS 'Runs asked for by the current attempt (add-new-jobs input times, 1 to 100).';
COMMENT ON COLUMN culprit_pending_probes.confirm IS 'True when the push is the window''s first push, confirmed beside the round''s probe.';
COMMENT ON COLUMN culprit_pending_probes.decision_task_id IS 'The probed push''s decision task, whose actions.json gives the add-new-jobs hook.';
COMMENT ON COLUMN culprit_pending_probes.payload IS 'The rendered hook payload that was (or in dry-run would have been) sent.';
COMMENT ON COLUMN culprit_pending_probes.dry_run IS 'True when Taskcluster was not called (dry_run configuration).';
COMMENT ON COLUMN culprit_pending_probes.state IS
    'intent: recorded, the hook not called yet (or the call''s outcome unknown: look the action task up before calling again); triggered: the action task exists, its jobs run; dry-run: not sent; done: the jobs resolved and their runs are in decisions.culprit_probes; failed: see error.';
COMMENT ON COLUMN culprit_pending_probes.action_task_id IS 'Task id of the add-new-jobs action task of the current attempt.';
COMMENT ON COLUMN culprit_pending_probes.error IS 'Why the request failed, for failed.';
COMMENT ON COLUMN culprit_pending_probes.intent_at IS 'When the current attempt''s intent was recorded, before calling Taskcluster.';
COMMENT ON COLUMN culprit_pending_probes.triggered_at IS 'When the current attempt''s action task was created.';
COMMENT ON COLUMN culprit_pending_probes.done_at IS 'When the current attempt''s jobs had all resolved (or the request failed).';

GRANT SELECT ON culprit_pending_probes TO retrig_sheriff;
