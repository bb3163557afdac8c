-- Version 29: what a heartbeat and a scheduling cycle read, made cheap (issue 41).
--
-- The power limit each GPU's readings last gave (0: none yet), kept with its judged
-- condition: a cycle reads it with the conditions instead of decoding every node's
-- readings. Rows from before this version read 0 until the node's next heartbeat.
ALTER TABLE gpu_conditions ADD COLUMN power_limit_w INTEGER NOT NULL DEFAULT 0;

-- A heartbeat reads the workers its node reported, not every rank of its jobs (a 512-GPU
-- gang has 512 on 64 nodes).
CREATE INDEX workers_by_node ON workers (node, job_id);
