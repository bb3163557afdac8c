-- Version 20: drift that acts (docs/drift.md). Predictions the serving side logged, by
-- their id, with the label that arrived for each later (NULL until then); the samples
-- a drift report was computed from, so a window of reports can become a reference; a
-- model's retraining template (a job spec, submitted when a report drifts); and each
-- job so submitted, with the report that caused it, which the tenant's retraining
-- budget counts.
CREATE TABLE drift_predictions (
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  prediction_id TEXT NOT NULL,
  segment TEXT NOT NULL,
  value TEXT NOT NULL,
  at BIGINT NOT NULL,
  label TEXT,
  labeled_at BIGINT,
  PRIMARY KEY (model_id, version, prediction_id)
);
CREATE INDEX drift_predictions_by_time ON drift_predictions (model_id, version, at);
ALTER TABLE drift_reports ADD COLUMN samples TEXT NOT NULL DEFAULT '';
CREATE TABLE model_retraining (
  model_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  template TEXT NOT NULL,
  set_by TEXT NOT NULL,
  set_at BIGINT NOT NULL
);
CREATE TABLE retraining_jobs (
  job_id BIGINT PRIMARY KEY,
  tenant TEXT NOT NULL,
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  report_id BIGINT NOT NULL,
  submitted_at BIGINT NOT NULL
);
CREATE INDEX retraining_jobs_by_model ON retraining_jobs (model_id, job_id);
CREATE INDEX retraining_jobs_by_tenant ON retraining_jobs (tenant, job_id);
