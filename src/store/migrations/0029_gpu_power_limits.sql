-- Version 29: the power limit each GPU's readings last gave (0: none yet), kept with its
-- judged condition. The scheduler reads it every cycle with the conditions instead of
-- decoding every node's readings (issue 41). Rows from before this version read 0 until
-- the node's next heartbeat writes the limit.
ALTER TABLE gpu_conditions ADD COLUMN power_limit_w INTEGER NOT NULL DEFAULT 0;
