#!/usr/bin/env python3
"""A plain torch.distributed job for the PyTorch end-to-end test (pytorch_test.cc).

It knows nothing of Corral but its environment: torch.distributed's env:// variables
(set by corral-agent, or by torchrun from the PET_* settings the agent gives it) and
CORRAL_CHECKPOINT_DIR / CORRAL_RESTORE_FROM. It never reports a checkpoint, as a plain
PyTorch script would not, so a resume proves the agent's fallback to the newest complete
checkpoint in the directory (docs/jobspec.md).

  torch_allreduce.py --steps N --step-s S --world W --local-world L --result FILE

Each step every rank all-reduces (rank + 1) * step; rank 0 adds the sum to a running
total and saves {step, total} as step-NNNNNN.pt (a temp name, then a rename). The world it
joined must be the one the test expects (W ranks, L per node), or it exits 3 saying why.
At the end rank 0 writes FILE: the total and the step this attempt started from.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def fail(message):
    print("torch_allreduce: " + message, file=sys.stderr, flush=True)
    sys.exit(3)


def save(directory, step, total):
    final = os.path.join(directory, "step-%06d.pt" % step)
    tmp = os.path.join(directory, ".tmp-step-%06d.pt" % step)
    torch.save({"step": step, "total": total}, tmp)
    os.replace(tmp, final)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--step-s", type=float, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--local-world", type=int, required=True)
    parser.add_argument("--result", required=True)
    args = parser.parse_args()

    dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
    rank, world = dist.get_rank(), dist.get_world_size()
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "0"))
    group_rank = os.environ.get("GROUP_RANK", "unset")
    print("torch_allreduce: rank=%d world=%d local_world=%d group_rank=%s local_rank=%s"
          % (rank, world, local_world, group_rank, os.environ.get("LOCAL_RANK")), flush=True)
    if world != args.world:
        fail("joined a world of %d ranks, expected %d" % (world, args.world))
    if local_world != args.local_world:
        fail("LOCAL_WORLD_SIZE is %d, expected %d" % (local_world, args.local_world))
    if group_rank != str(rank // args.local_world):
        fail("GROUP_RANK is %s, expected %d" % (group_rank, rank // args.local_world))

    start, total = 0, 0
    restore = os.environ.get("CORRAL_RESTORE_FROM", "")
    if restore:
        state = torch.load(restore)
        start, total = state["step"], state["total"]
    print("torch_allreduce: restore_from=%r start_step=%d" % (restore, start), flush=True)

    directory = os.environ["CORRAL_CHECKPOINT_DIR"]
    os.makedirs(directory, exist_ok=True)
    for step in range(start + 1, args.steps + 1):
        time.sleep(args.step_s)
        x = torch.tensor([float((rank + 1) * step)], dtype=torch.float64)
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        if rank == 0:
            total += int(x.item())
            save(directory, step, total)
    dist.barrier()
    if rank == 0:
        with open(args.result + ".tmp", "w") as f:
            json.dump({"total": total, "start_step": start, "world": world}, f)
        os.replace(args.result + ".tmp", args.result)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
