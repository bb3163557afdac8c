-- Version 30: shares of a GPU (issue 44).
--
-- A job of shares holds a share of each of its GPUs, in thousandths (resources.gpuShare);
-- 0 is a whole GPU, which is every row from before this version. Several jobs' shares may
-- be active on one GPU: the one-active-row rule now holds for whole GPUs only, and
-- insert_allocation refuses a row that would take a GPU past 1000 thousandths (a whole GPU
-- beside a share included). A job holds one share of a GPU at most.
ALTER TABLE allocations ADD COLUMN share_milli INTEGER NOT NULL DEFAULT 0;
DROP INDEX allocations_one_active_per_gpu;
CREATE UNIQUE INDEX allocations_one_active_per_gpu ON allocations (node, gpu_index)
  WHERE active = 1 AND share_milli = 0;
CREATE UNIQUE INDEX allocations_one_share_per_job ON allocations (node, gpu_index, job_id)
  WHERE active = 1 AND share_milli > 0;
-- What insert_allocation sums, for a GPU's active rows of every kind.
CREATE INDEX allocations_active_by_gpu ON allocations (node, gpu_index) WHERE active = 1;

-- In the usage history, GPUs with their fractions: what a tenant holds (2.25) and is
-- guaranteed (3.5).
ALTER TABLE usage_history ADD COLUMN gpus_f DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE usage_history ADD COLUMN allocated_f DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE usage_history ADD COLUMN borrowed_f DOUBLE PRECISION NOT NULL DEFAULT 0;
UPDATE usage_history SET gpus_f = gpus, allocated_f = allocated, borrowed_f = borrowed;
ALTER TABLE usage_history DROP COLUMN gpus;
ALTER TABLE usage_history DROP COLUMN allocated;
ALTER TABLE usage_history DROP COLUMN borrowed;
ALTER TABLE usage_history RENAME COLUMN gpus_f TO gpus;
ALTER TABLE usage_history RENAME COLUMN allocated_f TO allocated;
ALTER TABLE usage_history RENAME COLUMN borrowed_f TO borrowed;
