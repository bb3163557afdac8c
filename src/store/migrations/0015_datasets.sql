-- Version 15: dataset versions (docs/datasets.md). The content columns are written once;
-- only the status columns change. parents and shared_with are comma-separated (refs and
-- tenant names never hold a comma). job_datasets is the lineage a job was admitted on:
-- what holds it while a version has not passed, and what finds every job that used one.
CREATE TABLE dataset_versions (
  dataset_id TEXT NOT NULL,
  version TEXT NOT NULL,
  tenant TEXT NOT NULL,
  uri TEXT NOT NULL,
  digest TEXT NOT NULL,
  schema_hash TEXT NOT NULL,
  size_bytes BIGINT NOT NULL,
  parents TEXT NOT NULL,
  shared_with TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  status_by TEXT NOT NULL,
  status_at BIGINT NOT NULL,
  PRIMARY KEY (dataset_id, version)
);
CREATE TABLE job_datasets (
  job_id BIGINT NOT NULL,
  dataset_id TEXT NOT NULL,
  version TEXT NOT NULL,
  PRIMARY KEY (job_id, dataset_id, version)
);
CREATE INDEX job_datasets_by_version ON job_datasets (dataset_id, version);
