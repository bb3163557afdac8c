-- Version 5: the facts corrald's scheduler decides on, as corral-sim's does (issue 19).

-- Per job, kept by corrald: times the scheduler preempted it (max_preemptions_per_job);
-- GPU-milliseconds its ended attempts held (attained service, added when an attempt's
-- GPUs are released); the grace of the stop last asked of it (0: the agents' default);
-- and, while pending, its planned start as the scheduler forecast it and at the latest
-- (ms since the epoch; 0: none).
ALTER TABLE jobs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN attained_gpu_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN stop_grace_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN planned_start_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN planned_latest_ms BIGINT NOT NULL DEFAULT 0;

-- How long each tenant's successful runs of a job name took (the sum of its attempts'
-- wall time), the latest few per name: run-time estimates for planned starts.
CREATE TABLE run_history (
  id          {{ID}},
  tenant      TEXT NOT NULL,
  name        TEXT NOT NULL,
  job_id      BIGINT NOT NULL,
  run_ms      BIGINT NOT NULL,
  finished_at BIGINT NOT NULL
);
CREATE INDEX run_history_by_name ON run_history (name, tenant, id);

-- Rack power caps: declared by each node's agent at join (declared_by 'node/<id>') or by
-- the admin config (declared_by 'config', which wins). The scheduler takes the config's
-- cap, else the smallest any agent declared.
CREATE TABLE rack_caps (
  rack            TEXT NOT NULL,
  declared_by     TEXT NOT NULL,
  power_cap_watts BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  PRIMARY KEY (rack, declared_by)
);
