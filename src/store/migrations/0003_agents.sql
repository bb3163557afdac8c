-- Version 3: node agents (docs/agent-protocol.md).

-- Desired state, kept by corrald's lifecycle controller: how often a job's attempts
-- failed or were lost (restarts) and the earliest time its next attempt may be placed
-- (restart backoff, ms since the epoch; 0 = no wait).
ALTER TABLE jobs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;

-- Why a node is cordoned or draining (an admin's verb, or the health controller's
-- finding such as "gpu 3: XID 79 (fell off the bus)").
ALTER TABLE nodes ADD COLUMN admin_reason TEXT NOT NULL DEFAULT '';

-- One row per node whose agent has joined. `epoch` is the node's fencing epoch: it only
-- grows, when corrald declares the node lost (lost = 1), and every report must carry
-- the current one. `log_key` is the secret corrald presents to the agent's log
-- endpoint; no read of the API returns it.
CREATE TABLE agent_sessions (
  node         TEXT PRIMARY KEY,
  epoch        BIGINT NOT NULL,
  agent_url    TEXT NOT NULL,
  log_key      TEXT NOT NULL,
  joined_at    BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  lost         INTEGER NOT NULL
);

-- Observed state: each worker as its agent last reported it (written by agent reports
-- only). Keyed by attempt, so a late report from an old attempt never touches the new.
CREATE TABLE workers (
  job_id     BIGINT NOT NULL,
  attempt    INTEGER NOT NULL,
  rank       INTEGER NOT NULL,
  node       TEXT NOT NULL,
  pid        BIGINT NOT NULL,
  state      TEXT NOT NULL,
  exit_code  INTEGER NOT NULL,
  signal     INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  exited_at  BIGINT NOT NULL,
  PRIMARY KEY (job_id, attempt, rank)
);

CREATE INDEX allocations_by_node ON allocations (node, active);
