-- Version 21: the feature set versions a run looked up (docs/features.md, "From a training
-- job"), one row per (job, set, version): how many lookups and rows, the latest instant a
-- row asked for (-1 before any row), the first and last lookup times, and the sources'
-- watermarks (a JSON object) as the last lookup saw them. The run's manifest lists them.
CREATE TABLE run_features (
  job_id BIGINT NOT NULL,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  lookups BIGINT NOT NULL,
  row_count BIGINT NOT NULL,
  latest_at BIGINT NOT NULL,
  first_lookup_at BIGINT NOT NULL,
  last_lookup_at BIGINT NOT NULL,
  watermarks TEXT NOT NULL,
  PRIMARY KEY (job_id, name, version)
);
