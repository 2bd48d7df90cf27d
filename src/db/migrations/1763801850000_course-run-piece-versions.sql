-- Up Migration

-- Every change to a run's sessions rewrites the run's row, so that the row's xmin (the transaction
-- that wrote it as it is now) changes with anything /courses and the calendar feed show of the
-- run but its template: the answer cache reads a run's version from its own row and its
-- template's (src/answer-cache/piece-version-store.ts) instead of reading every session of the workspace. Until
-- now the runs were written only when their listing moved; the same triggers, fired by every
-- writer (statement triggers, the replica-role row trigger, TRUNCATE), now write every run whose
-- sessions changed, locked in id order as before.
CREATE OR REPLACE FUNCTION refresh_course_run_listings(p_run_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  UPDATE course_runs r SET listed_from = course_run_listed_from(r)
    FROM (SELECT c.id FROM course_runs c WHERE c.id = ANY(p_run_ids) ORDER BY c.id FOR NO KEY UPDATE) AS locked
   WHERE r.id = locked.id;
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION refresh_course_run_listings(p_run_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  UPDATE course_runs r SET listed_from = course_run_listed_from(r)
    FROM (SELECT c.id FROM course_runs c
           WHERE c.id = ANY(p_run_ids) AND c.listed_from IS DISTINCT FROM course_run_listed_from(c)
           ORDER BY c.id FOR NO KEY UPDATE) AS locked
   WHERE r.id = locked.id;
$$;
