-- Version 23: a telemetry sample is stored once (issue 38). An agent posts a batch again
-- when it got no answer, though corrald may have taken it, and it cuts its batches anew
-- when it does (the unsent samples go back to the front of its buffer), so no batch id
-- names a retry; a sample is known by what it is: one GPU's reading at one time. The
-- key makes a retried sample a no-op, in the raw table and so in the rollups, which add
-- only the samples that were new. Samples stored twice before this version are kept once.
CREATE TABLE telemetry_raw_once (
  node            TEXT NOT NULL,
  gpu_index       INTEGER NOT NULL,
  time            BIGINT NOT NULL,
  utilization     DOUBLE PRECISION NOT NULL,
  memory_used_mib BIGINT NOT NULL,
  power_watts     DOUBLE PRECISION NOT NULL,
  temperature_c   INTEGER NOT NULL,
  throttle        TEXT NOT NULL,  -- reasons, comma-separated ("" none)
  ecc_corrected   BIGINT NOT NULL,
  ecc_uncorrected BIGINT NOT NULL,
  PRIMARY KEY (node, gpu_index, time)
);
-- "WHERE true": SQLite reads an ON CONFLICT after a bare SELECT as part of a join.
INSERT INTO telemetry_raw_once
  SELECT node, gpu_index, time, utilization, memory_used_mib, power_watts, temperature_c,
         throttle, ecc_corrected, ecc_uncorrected
  FROM telemetry_raw WHERE true
  ON CONFLICT (node, gpu_index, time) DO NOTHING;
DROP TABLE telemetry_raw;
ALTER TABLE telemetry_raw_once RENAME TO telemetry_raw;
CREATE INDEX telemetry_raw_by_time ON telemetry_raw (time);
