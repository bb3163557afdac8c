-- Version 9: a checkpoint report may carry the training throughput the worker measured
-- (core::Checkpoint::throughput), kept with the job's GPU count in that attempt. Rows
-- written before carry neither (0: not measured).
ALTER TABLE checkpoints ADD COLUMN gpus BIGINT NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN throughput DOUBLE PRECISION NOT NULL DEFAULT 0;

-- The newest reported throughput of each job at each GPU type and size, replaced by each
-- report: what the scheduler learns the job's scaling curve from, one small row per size
-- however long the job runs.
CREATE TABLE job_throughput (
  job_id     BIGINT NOT NULL,
  gpu_type   TEXT NOT NULL,
  gpus       BIGINT NOT NULL,
  throughput DOUBLE PRECISION NOT NULL,
  time       BIGINT NOT NULL,
  PRIMARY KEY (job_id, gpu_type, gpus)
);
