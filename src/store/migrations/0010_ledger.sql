-- Version 10: the ledger (docs/ledger.md). Every GPU-millisecond of every accrual period
-- is in one entry: one per GPU, period, bucket and job, keyed so that accruing a period
-- twice (a retry after a crash, two replicas) writes each entry once. Version 1's
-- billing_ledger had no GPU, bucket or period and was never written; it goes.
DROP TABLE billing_ledger;
CREATE TABLE ledger_entries (
  id              {{ID}},
  idempotency_key TEXT NOT NULL UNIQUE,
  node            TEXT NOT NULL,
  gpu_index       INTEGER NOT NULL,
  gpu_type        TEXT NOT NULL,
  bucket          TEXT NOT NULL,
  tenant          TEXT NOT NULL,
  job_id          BIGINT NOT NULL,
  period_start    BIGINT NOT NULL,
  period_end      BIGINT NOT NULL,
  gpu_ms          BIGINT NOT NULL,
  amount_micros   BIGINT NOT NULL
);
CREATE INDEX ledger_by_period ON ledger_entries (period_start);
CREATE INDEX ledger_by_job ON ledger_entries (job_id, period_start);

-- The entries summed per UTC day, tenant, job, GPU type and bucket, added to in the
-- transaction that writes the entries (only for entries that were new), so a month's
-- chargeback reads a few thousand rows instead of millions.
CREATE TABLE ledger_daily (
  day           BIGINT NOT NULL,
  tenant        TEXT NOT NULL,
  job_id        BIGINT NOT NULL,
  gpu_type      TEXT NOT NULL,
  bucket        TEXT NOT NULL,
  gpu_ms        BIGINT NOT NULL,
  amount_micros BIGINT NOT NULL,
  PRIMARY KEY (day, tenant, job_id, gpu_type, bucket)
);

-- How far accrual has got: every period that ends at or before accrued_until is in the
-- ledger. Moved in the transaction that writes the periods' entries.
CREATE TABLE accrual_state (
  name          TEXT PRIMARY KEY,
  accrued_until BIGINT NOT NULL
);

-- GPU state history the ledger needs and observed state does not keep: when a GPU was
-- unhealthy (or its node lost) and when a node was cordoned or draining. gpu_index -1 is
-- every GPU of the node; end_at NULL: still so.
CREATE TABLE gpu_state_spans (
  id        {{ID}},
  node      TEXT NOT NULL,
  gpu_index INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  reason    TEXT NOT NULL,
  start_at  BIGINT NOT NULL,
  end_at    BIGINT
);
CREATE INDEX gpu_state_spans_by_end ON gpu_state_spans (end_at);
CREATE INDEX gpu_state_spans_open ON gpu_state_spans (node, gpu_index, kind, end_at);

-- Allocations overlapping an accrual period: released ones by their release time.
CREATE INDEX allocations_by_release ON allocations (released_at);
