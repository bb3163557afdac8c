-- Version 8: what agents observe is kept typed (store::ObservedNode) instead of one JSON
-- blob that mixed a copy of the registration with the agent's findings, and whose GPU
-- verdicts a heartbeat wrote over the inventory of the join. Observed state is reported
-- again by every agent at its next join or heartbeat, so the old rows are dropped rather
-- than converted; until then a node's GPUs have the health its registration gives them.
DROP TABLE node_inventory;

CREATE TABLE node_observations (
  node           TEXT PRIMARY KEY,
  inventory_json TEXT NOT NULL,  -- the join's inventory, as core::encode_observed_inventory
  readings_json  TEXT NOT NULL,  -- the last GPU readings, as core::encode_gpu_health
  heartbeat_at   BIGINT NOT NULL
);

-- One row per GPU judged from those readings; replaced with its node's observation.
CREATE TABLE gpu_conditions (
  node      TEXT NOT NULL,
  gpu_index BIGINT NOT NULL,
  health    TEXT NOT NULL,  -- ok | hot | unhealthy
  problem   TEXT NOT NULL,
  PRIMARY KEY (node, gpu_index)
);
