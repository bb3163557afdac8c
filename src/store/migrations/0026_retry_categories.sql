-- Version 26: retry policies by failure category (issue 43). Of a job's restarts, those
-- for lost nodes and for the out-of-memory killer (each may have its own budget), and
-- the category of the last retry decided ("node", "oom", "exit"; "" for none), which the
-- requeue reads to keep a node failure's place in the queue.
ALTER TABLE jobs ADD COLUMN node_restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN oom_restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN retry_category TEXT NOT NULL DEFAULT '';
-- When the job was first placed (0: never): a dependency on its start counts from it.
ALTER TABLE jobs ADD COLUMN first_started_ms BIGINT NOT NULL DEFAULT 0;
