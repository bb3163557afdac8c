-- Version 1: the whole first schema. Tables are grouped by writer (ARCHITECTURE.md):
-- desired state, observations, telemetry, checkpoints, billing, audit, then the
-- server's own bookkeeping. {{ID}} is an auto-assigned 64-bit integer primary key.

-- Desired state: written by the API (user intent) and the scheduler (decisions).
CREATE TABLE tenants (
  name        TEXT PRIMARY KEY,
  config_json TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);

CREATE TABLE jobs (
  id             {{ID}},
  tenant         TEXT NOT NULL,
  name           TEXT NOT NULL,
  priority_class TEXT NOT NULL,
  tier           INTEGER NOT NULL,
  gpus           INTEGER NOT NULL,
  spec_json      TEXT NOT NULL,
  phase          TEXT NOT NULL,
  attempt        INTEGER NOT NULL DEFAULT 0,
  reason         TEXT NOT NULL DEFAULT '',
  pending_kind   TEXT NOT NULL DEFAULT '',
  queue_position INTEGER NOT NULL DEFAULT 0,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  queued_at      BIGINT NOT NULL
);
CREATE INDEX jobs_by_phase ON jobs (phase, id);
CREATE INDEX jobs_by_tenant ON jobs (tenant, phase, id);

-- Secret env values live apart from the spec so no read of jobs can return them.
CREATE TABLE job_secrets (
  job_id          BIGINT PRIMARY KEY,
  secret_env_json TEXT NOT NULL
);

CREATE TABLE job_events (
  id      {{ID}},
  job_id  BIGINT NOT NULL,
  time    BIGINT NOT NULL,
  kind    TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX job_events_by_job ON job_events (job_id, id);

-- One row per GPU per attempt. The partial unique index is the last line of defence
-- against double allocation: whatever the scheduler believes, the database refuses a
-- second active row for one GPU.
CREATE TABLE allocations (
  id          {{ID}},
  job_id      BIGINT NOT NULL,
  attempt     INTEGER NOT NULL,
  node        TEXT NOT NULL,
  gpu_index   INTEGER NOT NULL,
  gpu_type    TEXT NOT NULL,
  epoch       BIGINT NOT NULL,
  active      INTEGER NOT NULL,
  borrowed    INTEGER NOT NULL,
  created_at  BIGINT NOT NULL,
  released_at BIGINT
);
CREATE UNIQUE INDEX allocations_one_active_per_gpu ON allocations (node, gpu_index)
  WHERE active = 1;
CREATE INDEX allocations_by_job ON allocations (job_id, active);

CREATE TABLE nodes (
  name       TEXT PRIMARY KEY,
  spec_json  TEXT NOT NULL,
  admin      TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE reservations (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  spec_json  TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

-- Observed state: written by agents only.
CREATE TABLE node_inventory (
  node           TEXT PRIMARY KEY,
  inventory_json TEXT NOT NULL,
  heartbeat_at   BIGINT NOT NULL
);

-- Telemetry: raw samples; a telemetry outage never blocks scheduling.
CREATE TABLE telemetry_samples (
  node         TEXT NOT NULL,
  gpu_index    INTEGER NOT NULL,
  time         BIGINT NOT NULL,
  utilization  DOUBLE PRECISION NOT NULL,
  power_watts  DOUBLE PRECISION NOT NULL
);
CREATE INDEX telemetry_by_node_time ON telemetry_samples (node, time);

-- Checkpoint metadata; the bytes live at uri.
CREATE TABLE checkpoints (
  id       {{ID}},
  job_id   BIGINT NOT NULL,
  attempt  INTEGER NOT NULL,
  step     BIGINT NOT NULL,
  uri      TEXT NOT NULL,
  bytes    BIGINT NOT NULL,
  checksum TEXT NOT NULL,
  time     BIGINT NOT NULL
);
CREATE INDEX checkpoints_by_job ON checkpoints (job_id, time);

-- Billing: append-only; each entry has its own idempotency key.
CREATE TABLE billing_ledger (
  id              {{ID}},
  idempotency_key TEXT NOT NULL UNIQUE,
  tenant          TEXT NOT NULL,
  job_id          BIGINT NOT NULL,
  gpu_type        TEXT NOT NULL,
  gpu_ms          BIGINT NOT NULL,
  amount_micros   BIGINT NOT NULL,
  start_at        BIGINT NOT NULL,
  end_at          BIGINT NOT NULL
);

-- Audit: append-only, hash-chained. audit_head is the single row appenders lock.
CREATE TABLE audit_log (
  seq        BIGINT PRIMARY KEY,
  time       BIGINT NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  target     TEXT NOT NULL,
  before_summary TEXT NOT NULL,
  after_summary  TEXT NOT NULL,
  request_id TEXT NOT NULL,
  prev_hash  TEXT NOT NULL,
  hash       TEXT NOT NULL
);
CREATE TABLE audit_head (
  id   INTEGER PRIMARY KEY,
  seq  BIGINT NOT NULL,
  hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');

-- The server's bookkeeping: tokens (hashed), idempotency keys, scheduler leases.
CREATE TABLE tokens (
  hash       TEXT PRIMARY KEY,
  role       TEXT NOT NULL,
  tenant     TEXT NOT NULL,
  node       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE idempotency_keys (
  scope         TEXT NOT NULL,
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);

CREATE TABLE scheduler_lease (
  shard      TEXT PRIMARY KEY,
  epoch      BIGINT NOT NULL,
  holder     TEXT NOT NULL
);
