-- Version 2: a per-tenant count of pending jobs, kept in the same transactions that
-- change job phases, so admission control reads one row instead of counting a queue
-- that may hold tens of thousands of jobs.
CREATE TABLE tenant_pending (
  tenant  TEXT PRIMARY KEY,
  pending BIGINT NOT NULL
);
INSERT INTO tenant_pending (tenant, pending)
  SELECT tenant, COUNT(*) FROM jobs WHERE phase = 'pending' GROUP BY tenant;
