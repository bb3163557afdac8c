"""A real local Corral cluster on loopback, for the dashboard tests.

Cluster starts corrald on a temporary data dir and a free port, then corral-agents
with simulated DGX H100 nodes (as scripts/run.sh does), and stops them all, with
the workers they started, at the end:

    with Cluster(bin_dir, trainer_dir, "examples/config/local.yaml") as cluster:
        job = cluster.submit("examples/local/finetune-1gpu.yaml")
        cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{job['id']}")[1]
                           ["phase"] == "running")

bin_dir is the build's src directory (server/corrald, agent/corral-agent) or a
directory holding both binaries; trainer_dir holds corral-trainer, which the
workers find on PATH.
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

DEFAULT_AGENTS = [("dgx1", "leaf1", "rack1"), ("dgx2", "leaf1", "rack2"),
                  ("dgx3", "leaf2", "rack3"), ("dgx4", "leaf2", "rack4")]


def find_binary(bin_dir, subdir, name):
    """bin_dir/name, or bin_dir/subdir/name as the build lays it out."""
    for path in (os.path.join(bin_dir, name), os.path.join(bin_dir, subdir, name)):
        if os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"no {name} in {bin_dir} or {bin_dir}/{subdir}")


def top_level_keys(yaml_text):
    """The keys of a YAML document's top-level mapping (those at column 0)."""
    return set(re.findall(r"^([A-Za-z_][\w-]*)\s*:", yaml_text, re.MULTILINE))


def wait_until(fn, timeout=15, interval=0.1, what=None):
    """Calls fn until it returns something truthy, and returns that."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout} s: {what or fn}")
        time.sleep(interval)


class Cluster:
    """corrald and its simulated agents; the constructor returns once all heartbeat."""

    def __init__(self, bin_dir, trainer_dir, config_path, agents=DEFAULT_AGENTS,
                 extra_config_yaml=None):
        self.data_dir = tempfile.mkdtemp(prefix="corral-dash-")
        self.corrald_log = os.path.join(self.data_dir, "corrald.log")
        self._agents = []
        self._corrald = None
        try:
            self._start(bin_dir, trainer_dir, config_path, agents, extra_config_yaml)
        except BaseException:
            self.stop(dump_log=True)
            raise

    def _start(self, bin_dir, trainer_dir, config_path, agents, extra_config_yaml):
        # The config corrald reads: the given file, with extra_config_yaml appended.
        # corrald's YAML reader takes a repeated top-level key without a word and
        # uses one of the two, so a repeated key is refused here.
        with open(config_path) as f:
            base = f.read()
        extra = extra_config_yaml or ""
        repeated = top_level_keys(base) & top_level_keys(extra)
        if repeated:
            raise ValueError(f"extra_config_yaml repeats {sorted(repeated)} of {config_path}")
        config = os.path.join(self.data_dir, "config.yaml")
        with open(config, "w") as out:
            out.write(base + "\n" + extra)
        # Port 0: corrald binds a free port and writes it to DATA_DIR/corrald.addr,
        # which leaves no window for another process to take the port first.
        with open(self.corrald_log, "wb") as log:
            self._corrald = subprocess.Popen(
                [find_binary(bin_dir, "server", "corrald"), "--data-dir", self.data_dir,
                 "--listen", "127.0.0.1:0", "--config", config],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        addr_file = os.path.join(self.data_dir, "corrald.addr")
        wait_until(lambda: self._corrald.poll() is not None or os.path.exists(addr_file),
                   what="corrald.addr")
        if self._corrald.poll() is not None:
            raise RuntimeError(f"corrald exited with {self._corrald.returncode}")
        with open(addr_file) as f:
            self.url = "http://" + f.read().strip()
        wait_until(self._healthy, what="corrald's /healthz")
        with open(os.path.join(self.data_dir, "admin.token")) as f:
            self.admin_token = f.read().strip()

        env = dict(os.environ, PATH=os.path.abspath(trainer_dir) + os.pathsep
                   + os.environ.get("PATH", ""))
        agent = find_binary(bin_dir, "agent", "corral-agent")
        for node, leaf, rack in agents:
            with open(os.path.join(self.data_dir, f"agent-{node}.log"), "wb") as log:
                self._agents.append(subprocess.Popen(
                    [agent, "--server", self.url,
                     "--join-token-file", os.path.join(self.data_dir, "join.token"),
                     "--node", node, "--simulate", "dgx-h100",
                     "--labels", f"leaf={leaf},spine=spine1,rack={rack}",
                     "--state-dir", os.path.join(self.data_dir, f"agent-{node}"),
                     "--telemetry-interval", "1", "--telemetry-flush", "2"],
                    env=env, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT))
        names = {node for node, _, _ in agents}
        wait_until(lambda: names <= self._heartbeating(), timeout=30,
                   what=f"heartbeats from {sorted(names)}")

    def _healthy(self):
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def _heartbeating(self):
        """The names of the nodes that have sent a heartbeat."""
        status, body = self.api("GET", "/v1/nodes")
        if status != 200:
            return set()
        return {n["id"] for n in body["nodes"] if "heartbeatAtMs" in n}

    def api(self, method, path, body=None, token=None, content_type="application/json"):
        """Calls corrald and returns (HTTP status, the parsed JSON answer or its text).

        A dict or list body is sent as JSON; a str one as it is, with content_type.
        token defaults to the admin token.
        """
        data = None
        if body is not None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token or self.admin_token}")
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def mint_token(self, role, tenant=None):
        """A new token of role (admin, member, agent, metrics); a member's has a tenant."""
        body = {"role": role}
        if tenant is not None:
            body["tenant"] = tenant
        status, answer = self.api("POST", "/v1/tokens", body)
        if status != 201:
            raise RuntimeError(f"POST /v1/tokens {body}: {status} {answer}")
        return answer["token"]

    def submit(self, spec, token=None):
        """Submits a job spec (a YAML file's path, or a dict) and returns the new job."""
        if isinstance(spec, dict):
            status, job = self.api("POST", "/v1/jobs", spec, token)
        else:
            with open(spec) as f:
                status, job = self.api("POST", "/v1/jobs", f.read(), token,
                                       content_type="application/yaml")
        if status != 201:
            raise RuntimeError(f"submit {spec}: {status} {job}")
        return job

    wait_until = staticmethod(wait_until)

    def stop(self, dump_log=False):
        """Stops the agents, corrald and every worker; removes the data dir.

        With dump_log, the tail of corrald's log goes to stderr first.
        """
        for p in self._agents + [self._corrald]:
            if p and p.poll() is None:
                p.terminate()
        for p in self._agents + [self._corrald]:
            if p:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # An agent that stops leaves its workers running on purpose (a restarted one
        # adopts them); each worker leads a process group, named in its run record.
        for record in glob.glob(os.path.join(self.data_dir, "agent-*/clusters/*/run/*.pid")):
            try:
                with open(record) as f:
                    worker = json.load(f).get("workerPid", 0)
                if worker > 0:
                    os.killpg(worker, signal.SIGKILL)
            except (OSError, ValueError):
                pass  # a record being rewritten, or a worker already gone
        if dump_log and os.path.exists(self.corrald_log):
            with open(self.corrald_log, errors="replace") as f:
                tail = f.readlines()[-40:]
            sys.stderr.write(f"--- the last lines of {self.corrald_log}\n" + "".join(tail))
        self._agents, self._corrald = [], None
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        self.stop(dump_log=exc_type is not None)
