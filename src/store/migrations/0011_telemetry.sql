-- Version 11: telemetry (docs/telemetry.md). Raw samples are kept for a retention window,
-- 1-minute and 1-hour rollups for longer ones, each in its own table, written only by
-- corrald's telemetry sink (never in a transaction of desired state). Version 1's
-- telemetry_samples was never written; it goes.
DROP TABLE telemetry_samples;
CREATE TABLE telemetry_raw (
  node            TEXT NOT NULL,
  gpu_index       INTEGER NOT NULL,
  time            BIGINT NOT NULL,
  utilization     DOUBLE PRECISION NOT NULL,
  memory_used_mib BIGINT NOT NULL,
  power_watts     DOUBLE PRECISION NOT NULL,
  temperature_c   INTEGER NOT NULL,
  throttle        TEXT NOT NULL,  -- reasons, comma-separated ("" none)
  ecc_corrected   BIGINT NOT NULL,
  ecc_uncorrected BIGINT NOT NULL
);
CREATE INDEX telemetry_raw_by_gpu_time ON telemetry_raw (node, gpu_index, time);
CREATE INDEX telemetry_raw_by_time ON telemetry_raw (time);

-- The rollups keep sums (averages are sum / samples) and maxima, so adding a batch is an
-- upsert per (GPU, bucket).
CREATE TABLE telemetry_rollup_1m (
  node                TEXT NOT NULL,
  gpu_index           INTEGER NOT NULL,
  start_at            BIGINT NOT NULL,
  samples             BIGINT NOT NULL,
  sum_utilization     DOUBLE PRECISION NOT NULL,
  max_utilization     DOUBLE PRECISION NOT NULL,
  sum_power_watts     DOUBLE PRECISION NOT NULL,
  max_power_watts     DOUBLE PRECISION NOT NULL,
  max_temperature_c   INTEGER NOT NULL,
  max_memory_used_mib BIGINT NOT NULL,
  throttled_samples   BIGINT NOT NULL,
  max_ecc_uncorrected BIGINT NOT NULL,
  PRIMARY KEY (node, gpu_index, start_at)
);
CREATE INDEX telemetry_rollup_1m_by_start ON telemetry_rollup_1m (start_at);

CREATE TABLE telemetry_rollup_1h (
  node                TEXT NOT NULL,
  gpu_index           INTEGER NOT NULL,
  start_at            BIGINT NOT NULL,
  samples             BIGINT NOT NULL,
  sum_utilization     DOUBLE PRECISION NOT NULL,
  max_utilization     DOUBLE PRECISION NOT NULL,
  sum_power_watts     DOUBLE PRECISION NOT NULL,
  max_power_watts     DOUBLE PRECISION NOT NULL,
  max_temperature_c   INTEGER NOT NULL,
  max_memory_used_mib BIGINT NOT NULL,
  throttled_samples   BIGINT NOT NULL,
  max_ecc_uncorrected BIGINT NOT NULL,
  PRIMARY KEY (node, gpu_index, start_at)
);
CREATE INDEX telemetry_rollup_1h_by_start ON telemetry_rollup_1h (start_at);

-- Since when a GPU's readings have shown a throttle reason corrald counts (0: not
-- throttled), so that throttling for agents.throttleDrainAfterMs makes it unhealthy.
ALTER TABLE gpu_conditions ADD COLUMN throttled_since BIGINT NOT NULL DEFAULT 0;
