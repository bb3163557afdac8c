-- Version 6: the cluster's identity (docs/agent-protocol.md §1).
-- One row, made once per store by Tx::cluster_id() (a random 128-bit id in hex) and never
-- changed: corrald hands it to every agent at join, and an agent keeps its run records
-- per cluster id, so an agent that outlives its cluster never takes another cluster's
-- job 1 for its own. `singleton` keeps the table to one row, so corralds that create it
-- at once on a shared PostgreSQL all end up with the first one written.
CREATE TABLE cluster_identity (
  singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
  cluster_id TEXT NOT NULL
);
