"""Real `ray start` nodes on one machine that do not share a network stack, or files: each node in
a network namespace of its own (a bridge and private addresses this harness creates, its own
hostname so our node names tell them apart), and a `private` node also in a mount namespace
with a tmpfs over `hidden` (where tests put homes and job folders): it sees the `store` folder,
the repository and /tmp, not the daemon's files.

Needs root, `ip` and `unshare`; `skip_reason()` says what is missing. Every process a node
starts stays in its namespace, so `close` kills exactly those (found by that namespace), never another
Ray on this machine.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = str(Path(__file__).resolve().parents[3])
RAY = str(Path(sys.executable).with_name("ray"))
_READY = "Ray runtime started"


def skip_reason() -> str | None:
    """Why this machine cannot run the harness (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (network and mount namespaces)"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (iproute2 / util-linux)"
    if not Path(RAY).exists():
        return f"needs the `ray` command beside {sys.executable}"
    probe = subprocess.run(["ip", "netns", "add", f"arprobe{os.getpid()}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot create a network namespace: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", f"arprobe{os.getpid()}"], capture_output=True)
    return None


@dataclass
class RayNode:
    host: str
    """Its hostname: our node names start with it (`<host>-<ray node id>`)."""
    netns: str
    ip: str
    proc: subprocess.Popen[bytes]


class NetnsCluster:
    """A head and workers, each `ray start --block` in its own namespaces (see the module docstring)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="arn", dir="/tmp"))
        self.hidden = self.root / "hidden"
        """Homes and job folders: the private node does not see them."""
        self.store = self.root / "store"
        """A folder every node sees (a shared path, or a file:// store)."""
        self.open = self.root / "open"
        """Gates and other files the tests share with jobs on every node."""
        for folder in (self.hidden, self.store, self.open):
            folder.mkdir()
        self.tag = f"ar{os.getpid() % 100000}"
        used = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
        self.subnet = next(s for s in (f"10.{random.randint(200, 254)}.{random.randint(0, 255)}" for _ in range(50))
                           if f" {s}." not in used)
        self.bridge = f"{self.tag}b"
        self.nodes: list[RayNode] = []
        self._namespaces: list[str] = []
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    @property
    def head(self) -> RayNode:
        return self.nodes[0]

    @property
    def address(self) -> str:
        """The head's GCS address."""
        return f"{self.head.ip}:6379"

    def env(self) -> dict[str, str]:
        """What every node's and the daemon's processes run with."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        return {**env, "RAY_AUTH_MODE": "disabled", "PYTHONPATH": REPO}

    def add_node(self, host: str, gpus: int, private: bool = False) -> RayNode:
        """Start a node (the first is the head) and wait until it has joined."""
        index = len(self._namespaces) + 2
        netns, ip = f"{self.tag}n{index}", f"{self.subnet}.{index}"
        _ip("netns", "add", netns)
        self._namespaces.append(netns)
        outer, inner = f"{self.tag}v{index}", f"{self.tag}p{index}"
        _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        _ip("link", "set", inner, "netns", netns)
        _ip("link", "set", outer, "master", self.bridge, "up")
        for args in (("addr", "add", f"{ip}/24", "dev", inner), ("link", "set", inner, "up"), ("link", "set", "lo", "up")):
            _ip("-n", netns, *args)
        temp = self.root / f"r{index}"
        start = [RAY, "start", "--node-ip-address", ip, "--temp-dir", str(temp), "--num-cpus", "1",
                 "--num-gpus", str(gpus), "--object-store-memory", str(80 << 20), "--block"]
        start += ["--head", "--port", "6379", "--include-dashboard", "false"] if not self.nodes else \
            ["--address", self.address]
        script = f"hostname {host}; "
        if private:
            script += f"mount -t tmpfs tmpfs {self.hidden} && "
        script += 'exec "$@"'
        unshare = ["unshare", "--uts"] + (["--mount", "--propagation", "private"] if private else [])
        argv = ["ip", "netns", "exec", netns, *unshare, "sh", "-c", script, "node", *start]
        for tries_left in (1, 0):
            log = open(self.root / f"{host}.log", "wb")
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)
            node = RayNode(host, netns, ip, proc)
            deadline = time.monotonic() + 120
            while _READY not in (text := (self.root / f"{host}.log").read_text(errors="replace")):
                if proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            else:
                self.nodes.append(node)
                return node
            # `ray start` gives a raylet 30 s (hard-coded) to register with the GCS: on a loaded machine
            # (the whole suite on 2 cores) it may not; what it left in the namespace goes, then once more
            self.kill(node)
            if not tries_left or "timed out during startup" not in text:
                raise RuntimeError(f"ray node {host} did not start: {text[-3000:]}")
        raise AssertionError("unreachable")

    def run_in(self, node: RayNode, argv: list[str], env: dict[str, str], timeout: float = 180) -> str:
        """Run a command in the node's network namespace (e.g. `compute up`, which then lives there)."""
        done = subprocess.run(["ip", "netns", "exec", node.netns, *argv], env=env, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-3000:]}")
        return done.stdout

    def kill(self, node: RayNode) -> None:
        """SIGKILL every process of `node` (raylet, workers, our agent, the jobs it runs), as when its
        host dies; its namespace and address stay (connections to it are refused)."""
        inodes = {os.stat(f"/run/netns/{node.netns}").st_ino}
        try:
            os.killpg(node.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while pids := _pids_in(inodes):
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        node.proc.wait(timeout=10)

    def close(self) -> None:
        """Kill every process in the nodes' namespaces (found by namespace, and by each node's process
        group), then remove the namespaces, links and files."""
        inodes = {os.stat(f"/run/netns/{ns}").st_ino for ns in self._namespaces if os.path.exists(f"/run/netns/{ns}")}
        for node in self.nodes:
            try:
                os.killpg(node.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in range(20):
            pids = _pids_in(inodes)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not pids:
                break
            time.sleep(0.3)
        for node in self.nodes:
            node.proc.wait(timeout=10)
        for index, ns in enumerate(self._namespaces, start=2):
            subprocess.run(["ip", "link", "del", f"{self.tag}v{index}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def compute_up(cluster: NetnsCluster, home: Path, *flags: str) -> dict[str, object]:
    """`autoresearch compute up --backend ray --address HEAD FLAGS...` run in the head's namespace,
    so the daemon it starts lives there (a driver must run on a cluster node); -> its --json."""
    env = {**cluster.env(), "AUTORESEARCH_HOME": str(home)}
    cli = [sys.executable, "-c", "import sys; from autoresearch.cli import main; sys.exit(main())"]
    out = cluster.run_in(cluster.head, [*cli, "compute", "up", "--backend", "ray", "--address", cluster.address,
                                        "--grace", "2", "--min-runtime", "0.2", "--json", *flags], env)
    return json.loads(out)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _pids_in(inodes: set[int]) -> list[int]:
    """The processes whose network namespace is one of `inodes`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}/ns/net").st_ino in inodes:
                    found.append(int(entry))
            except OSError:  # gone meanwhile
                pass
    return found
