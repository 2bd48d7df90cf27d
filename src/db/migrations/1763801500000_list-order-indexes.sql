-- Up Migration

-- Every list of internal GraphQL reads its pages in its documented order, then by id, per parent
-- row: an index on (the parent's column, the order's columns) serves each page by reading only
-- its rows, where otherwise every row of the parent is read and sorted. The cost estimate of
-- internal GraphQL reads these from the catalog (docs/internal-graphql.md, Cost budgets).
CREATE INDEX course_templates_workspace_title ON course_templates (workspace_id, title, id);
CREATE INDEX course_runs_workspace_created ON course_runs (workspace_id, created_at, id);
CREATE INDEX course_runs_template_created ON course_runs (template_id, created_at, id);
DROP INDEX course_runs_template;
CREATE INDEX sessions_workspace_start ON sessions (workspace_id, starts_at, id);
CREATE INDEX bookings_course_run_created ON bookings (course_run_id, created_at DESC, id DESC);
DROP INDEX bookings_course_run;

-- Down Migration
CREATE INDEX bookings_course_run ON bookings (course_run_id);
DROP INDEX bookings_course_run_created;
DROP INDEX sessions_workspace_start;
CREATE INDEX course_runs_template ON course_runs (template_id);
DROP INDEX course_runs_template_created;
DROP INDEX course_runs_workspace_created;
DROP INDEX course_templates_workspace_title;
