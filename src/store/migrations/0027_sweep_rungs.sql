-- Version 27: sweeps (issue 43). Each verdict of ASHA's stopping rule on a trial of a
-- sweep (sched/asha.h), once per trial and rung: the value judged, whether it went on,
-- and its place in the order the trials reached that rung (seq 0 first). A verdict only
-- looks at the ones before it at its rung, so (sweep_job, rung, seq) is unique: two
-- transactions that judged a rung at once cannot both commit, and the one that did not
-- is retried with the other's verdict in view.
CREATE TABLE sweep_rungs (
  sweep_job BIGINT NOT NULL,
  trial_job BIGINT NOT NULL,
  rung INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  step BIGINT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  continued INTEGER NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (trial_job, rung),
  UNIQUE (sweep_job, rung, seq)
);
