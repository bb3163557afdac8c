-- Version 9: a checkpoint report may carry the training throughput the worker measured
-- (core::Checkpoint::throughput), kept with the job's GPU count in that attempt, so the
-- scheduler learns each elastic job's scaling curve from what its workers ran at. Rows
-- written before carry neither (0: not measured).
ALTER TABLE checkpoints ADD COLUMN gpus BIGINT NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN throughput DOUBLE PRECISION NOT NULL DEFAULT 0;
