#!/usr/bin/env python3
"""A minimal PyTorch DDP job speaking Corral's worker contract.

Run by corral-agent (one process per GPU, `processes: perGpu`), it reads the
torchrun-compatible environment the agent sets: MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE, LOCAL_RANK, CUDA_VISIBLE_DEVICES (the agent already narrowed it to this
rank's GPU), plus CORRAL_CHECKPOINT_DIR, CORRAL_RESTORE_FROM, CORRAL_ATTEMPT,
CORRAL_AGENT_URL and CORRAL_WORKER_TOKEN.

  python3 examples/torch_ddp.py --steps 1000 --checkpoint-every 100

It trains a small MLP on a fixed-seed synthetic regression task, checkpoints
atomically (temp file, fsync, rename, fsync dir) every N steps and on SIGTERM (then
exits 143, like corral-trainer), resumes from CORRAL_RESTORE_FROM (a checkpoint file or
a directory holding them), and reports each checkpoint to the local agent. Rank 0
writes and reports; every rank loads. It needs torch, so CI only byte-compiles it
(python3 -m py_compile examples/torch_ddp.py); it is for real GPU nodes.
"""
import argparse
import hashlib
import json
import os
import signal
import sys
import time
import urllib.request

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

STOP = False


def on_sigterm(signum, frame):
    global STOP
    STOP = True


def newest_checkpoint(path):
    """A file is used as is; a directory yields its newest complete checkpoint."""
    if not path:
        return None
    if os.path.isfile(path):
        return path
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.startswith("step-") and n.endswith(".pt"))
        return os.path.join(path, names[-1]) if names else None
    return None


def write_atomic(path, state):
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, ".tmp-%s-%d" % (os.path.basename(path), os.getpid()))
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def report(path, step, throughput):
    url, token = os.environ.get("CORRAL_AGENT_URL"), os.environ.get("CORRAL_WORKER_TOKEN")
    if not url or not token:
        return
    with open(path, "rb") as f:
        data = f.read()
    # throughput: samples/s over the whole job since the last report; the scheduler learns
    # the job's scaling curve from it (0: not measured yet).
    body = json.dumps({"step": step, "path": path, "bytes": len(data),
                       "checksum": "sha256:" + hashlib.sha256(data).hexdigest(),
                       "throughput": throughput}).encode()
    req = urllib.request.Request(url + "/local/checkpoint", data=body, method="POST",
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=5).read()
    except OSError as e:  # the agent retries towards corrald; a local miss is only logged
        print("torch_ddp: checkpoint report failed: %s" % e, file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)

    use_cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if use_cuda else "gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", 0) if use_cuda else torch.device("cpu")  # one visible GPU
    if use_cuda:
        torch.cuda.set_device(device)

    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
    ddp = DDP(model, device_ids=[0] if use_cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    true_w = torch.randn(32, 1, generator=torch.Generator().manual_seed(7)).to(device)

    step = 0
    restore = newest_checkpoint(os.environ.get("CORRAL_RESTORE_FROM", ""))
    if restore:
        state = torch.load(restore, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print("torch_ddp: rank %d resumed from %s at step %d" % (rank, restore, step), file=sys.stderr)

    ckpt_dir = os.environ.get("CORRAL_CHECKPOINT_DIR", "")
    attempt = os.environ.get("CORRAL_ATTEMPT", "0")

    last = {"step": step, "time": time.monotonic()}

    def checkpoint():
        if rank != 0 or not ckpt_dir:
            return
        os.makedirs(ckpt_dir, exist_ok=True)
        path = os.path.join(ckpt_dir, "step-%09d-attempt-%s.pt" % (step, attempt))
        write_atomic(path, {"step": step, "model": model.state_dict(), "opt": opt.state_dict()})
        now = time.monotonic()
        done = step - last["step"]
        rate = done * args.batch * world / (now - last["time"]) if done > 0 else 0.0
        last.update(step=step, time=now)
        report(path, step, rate)

    loss = torch.zeros(())
    while step < args.steps:
        # Every rank must agree to stop at the same step, or DDP's all-reduce hangs.
        flag = torch.tensor([1.0 if STOP else 0.0], device=device)
        dist.all_reduce(flag)
        if flag.item() > 0:
            checkpoint()
            dist.barrier()
            dist.destroy_process_group()
            sys.exit(143)
        gen = torch.Generator().manual_seed(step * world + rank)
        x = torch.randn(args.batch, 32, generator=gen).to(device)
        y = x @ true_w
        loss = nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if args.checkpoint_every and step % args.checkpoint_every == 0 and step < args.steps:
            checkpoint()
    if rank == 0:
        print("final loss=%.6f steps=%d world=%d device=%s" % (loss.item(), step, world, device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
