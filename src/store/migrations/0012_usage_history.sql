-- Version 12: usage history (docs/dashboard.md#over-time). Every `dashboard.historyMs`
-- corrald samples each tenant's GPUs, share, queue and utilization, plus one row for the
-- whole cluster (tenant '*'), so the dashboard can draw them over time; the live values
-- are recomputed on every read, but what they were an hour ago is kept only here.
CREATE TABLE usage_history (
  time           BIGINT NOT NULL,
  tenant         TEXT NOT NULL,              -- '*': the whole cluster
  gpus           BIGINT NOT NULL,            -- '*': GPUs registered; a tenant: guaranteed
  allocated      BIGINT NOT NULL,
  borrowed       BIGINT NOT NULL,
  utilization    DOUBLE PRECISION NOT NULL,  -- mean over its allocated GPUs' latest readings, 0..1
  share          DOUBLE PRECISION NOT NULL,  -- fair share of the fleet, 0..1 ('*': 1)
  usage_gpus     DOUBLE PRECISION NOT NULL,  -- decayed usage as average GPUs
  pending        BIGINT NOT NULL,
  preemptions    BIGINT NOT NULL,            -- during the interval that ends at `time`
  restarts       BIGINT NOT NULL,
  placed         BIGINT NOT NULL,            -- jobs placed during the interval
  wait_ms_sum    BIGINT NOT NULL,            -- their queue waits, summed
  PRIMARY KEY (tenant, time)
);
CREATE INDEX usage_history_by_time ON usage_history (time);
