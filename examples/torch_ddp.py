#!/usr/bin/env python3
"""A minimal PyTorch DDP job speaking Corral's worker contract.

Run by corral-agent (one process per GPU, `processes: perGpu`), it reads the
torchrun-compatible environment the agent sets: MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE, LOCAL_RANK, CUDA_VISIBLE_DEVICES (the agent already narrowed it to this
rank's GPU), plus CORRAL_CHECKPOINT_DIR, CORRAL_RESTORE_FROM, CORRAL_ATTEMPT,
CORRAL_AGENT_URL and CORRAL_WORKER_TOKEN, which corral.job reads.

  python3 examples/torch_ddp.py --steps 1000 --checkpoint-every 100

It trains a small MLP on a fixed-seed synthetic regression task, checkpoints
atomically (temp file, fsync, rename, fsync dir) every N steps and on SIGTERM (then
exits 143, like corral-trainer), resumes from CORRAL_RESTORE_FROM (a checkpoint file or
a directory holding them), and reports its loss and each checkpoint through the
`corral` package (python/, docs/python.md). Rank 0 writes and reports; every rank
loads. Outside Corral (no CORRAL_AGENT_URL) it trains and reports nothing.

`corral` is imported as installed (pip install ./python), else from this checkout's
python/ directory. tests/python/client_test.py runs this script under real agents as
a 2-rank gloo job on the CPU (when torch is installed); it is meant for GPU nodes.
"""
import argparse
import os
import signal
import sys
import time

try:
    import corral
except ImportError:  # not installed: the package beside this example, in the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import corral

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


def report_failed(what, error):
    # The agent retries towards corrald itself; a report it refused is only logged, so
    # a full queue or a restarting agent never ends the training.
    print("torch_ddp: %s not reported: %s" % (what, error), file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--metrics-every", type=int, default=10)
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

    job = corral.job.current()  # None when not run by corral-agent
    step = 0
    # CORRAL_RESTORE_FROM: the checkpoint an earlier attempt reported, or the newest
    # complete one the agent found in the directory; None on a first attempt.
    restore = newest_checkpoint(job.restore_from if job else None)
    if restore:
        state = torch.load(restore, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print("torch_ddp: rank %d resumed from %s at step %d" % (rank, restore, step), file=sys.stderr)

    ckpt_dir = job.checkpoint_dir if job else None
    last = {"step": step, "time": time.monotonic()}
    points = []  # rank 0's loss, reported every --metrics-every steps

    def flush_metrics():
        if job and points:
            try:
                job.log_points(points)
            except corral.CorralError as e:
                report_failed("loss", e)
        points.clear()

    def checkpoint():
        if rank != 0 or not ckpt_dir:
            return
        state = {"step": step, "model": model.state_dict(), "opt": opt.state_dict()}
        now = time.monotonic()
        done = step - last["step"]
        # Samples/s since the last checkpoint: the scheduler learns the job's scaling
        # curve from it (0: not measured yet).
        rate = done * args.batch * world / (now - last["time"]) if done > 0 else 0.0
        last.update(step=step, time=now)
        path = os.path.join(ckpt_dir, "step-%09d-attempt-%d.pt" % (step, job.attempt))
        try:
            job.save_checkpoint(step, lambda f: torch.save(state, f), path=path, throughput=rate)
        except corral.CorralError as e:
            report_failed("checkpoint %s" % path, e)

    loss = torch.zeros(())
    while step < args.steps:
        # Every rank must agree to stop at the same step, or DDP's all-reduce hangs.
        flag = torch.tensor([1.0 if STOP else 0.0], device=device)
        dist.all_reduce(flag)
        if flag.item() > 0:
            flush_metrics()
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
        if rank == 0 and job:
            # A tensor until flushed: .item() each step would wait for the GPU each step.
            points.append(("loss", step, loss.detach()))
            if len(points) >= args.metrics_every:
                flush_metrics()
        if args.checkpoint_every and step % args.checkpoint_every == 0 and step < args.steps:
            checkpoint()
    flush_metrics()
    if rank == 0:
        print("final loss=%.6f steps=%d world=%d device=%s" % (loss.item(), step, world, device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
