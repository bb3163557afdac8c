-- Version 19: drift (docs/drift.md). A model version's reference sample per feature and
-- its thresholds, as one JSON document replaced whole; and every drift report computed
-- against it, kept with its segment and whether it drifted.
CREATE TABLE drift_references (
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  reference TEXT NOT NULL,
  set_by TEXT NOT NULL,
  set_at BIGINT NOT NULL,
  PRIMARY KEY (model_id, version)
);
CREATE TABLE drift_reports (
  id {{ID}},
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  segment TEXT NOT NULL,
  drifted BIGINT NOT NULL,
  report TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX drift_reports_by_version ON drift_reports (model_id, version, id);
