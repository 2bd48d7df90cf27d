-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (data-versions.sql), which migrate applies after the pending migrations.

-- The data version of a workspace: it grows, in the writing transaction, with every change to a
-- table the public answers are built from (course_templates, course_runs, sessions, bookings,
-- participants, workspaces), whoever writes: the service, an import, the demo, plain SQL, the
-- booking trigger's transaction. An answer cached under a version is the answer for as long as a
-- fresh read of the version returns that number.
--
-- A workspace's version is the sum of its slots. A writing transaction adds one to the slot its
-- transaction id picks, so that concurrent writers of one workspace lock different rows instead of
-- queueing, each behind the commit of the one before, on a single row. Every writing transaction
-- adds at least one and nothing ever subtracts, so two different committed states of a workspace
-- never read as the same version.
--
-- Rows are never deleted (there is no foreign key to cascade): a version that started again from
-- zero would meet answers cached under the old numbers.
CREATE TABLE data_versions (
  workspace_id text NOT NULL,
  slot smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
  version bigint NOT NULL CHECK (version > 0),
  PRIMARY KEY (workspace_id, slot)
-- Room on every page for the updates of its rows, so that they stay heap-only (HOT): no index
-- entry per update.
) WITH (fillfactor = 50);

-- Every workspace has at least one slot from its first moment on (a TRUNCATE moves every slot on).
INSERT INTO data_versions (workspace_id, slot, version) SELECT id, 0, 1 FROM workspaces;

-- Down Migration
DROP TABLE data_versions;
