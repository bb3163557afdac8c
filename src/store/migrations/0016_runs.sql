-- Version 16: training runs (docs/runs.md). A job is its run; these keep what the job row
-- does not: each attempt as placed (GPUs as "node:index,...", the topology level holding
-- them, the checkpoint it restores from), the metric points and artifacts its workers
-- report, and the run a reproduction was made from. A point's key is (job, name, step),
-- an artifact's (job, uri): a retried report writes nothing new.
CREATE TABLE run_attempts (
  job_id BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  gpu_type TEXT NOT NULL,
  gpus TEXT NOT NULL,
  packed TEXT NOT NULL,
  restored_from TEXT NOT NULL,
  restored_step BIGINT NOT NULL,
  started_at BIGINT NOT NULL,
  PRIMARY KEY (job_id, attempt)
);
CREATE TABLE run_metrics (
  job_id BIGINT NOT NULL,
  name TEXT NOT NULL,
  step BIGINT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  attempt BIGINT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (job_id, name, step)
);
-- Each run's number of points: what the cap is checked against without counting rows.
CREATE TABLE run_metric_totals (
  job_id BIGINT PRIMARY KEY,
  points BIGINT NOT NULL
);
CREATE TABLE run_artifacts (
  job_id BIGINT NOT NULL,
  uri TEXT NOT NULL,
  name TEXT NOT NULL,
  digest TEXT NOT NULL,
  size_bytes BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (job_id, uri)
);
CREATE TABLE run_origins (
  job_id BIGINT PRIMARY KEY,
  reproduces BIGINT NOT NULL
);
