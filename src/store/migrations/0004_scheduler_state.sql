-- Version 4: scheduler state that must survive a restart of corrald.
-- tenant_usage: each tenant's decayed fair-share usage (GPU-seconds weighted by GPU type,
-- decayed to as_of), written by the scheduler loop at most every few seconds, so a
-- restarted corrald does not forget who has had the GPUs.
CREATE TABLE tenant_usage (
  tenant      TEXT PRIMARY KEY,
  gpu_seconds DOUBLE PRECISION NOT NULL,
  as_of       BIGINT NOT NULL
);
-- elastic_targets: the size an elastic job restarts at after the scheduler resized it
-- (checkpoint and restart at the new size); written with the decision, removed when the
-- job is placed again.
CREATE TABLE elastic_targets (
  job_id     BIGINT PRIMARY KEY,
  gpus       INTEGER NOT NULL,
  updated_at BIGINT NOT NULL
);
