# Test hosts on one machine: N network namespaces, one per MPI rank, joined
# by rate-limited veth links, and the files that make Open MPI launch into
# them (an rsh agent that runs `ip netns exec` instead of ssh, a hostfile).
"""TestHosts(n): n namespaces "hosts" on a private network, torn down on exit.

Layout (all of it in namespaces this process creates; nothing in the root
namespace, so no packet can leave the machine or reach another address):

    host 0 (10.77.0.1, tgv0) --veth--+
    host 1 (10.77.0.2, tgv0) --veth--+-- bridge in the "switch" namespace
    ...                              |

Each veth end has a token-bucket filter (tc tbf; this kernel has no netem)
in both directions, so ranks talk over a link of a known rate. mpirun runs
in host 0 and starts orted on the others through agent.sh, which maps a
host's address to its namespace. Names carry a per-process prefix
(tgnet-PID-); a process that finds namespaces of a prefix whose PID is gone
removes them first (a run killed before its cleanup).
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile

PREFIX = "tgnet-"
SUBNET = "10.77.0"  # a private range, used only inside these namespaces
IFACE = "tgv0"  # every host's link has this name, so one if_include fits all
IP_TIMEOUT_S = 20

# Note [Dead links]: with a link down, mpirun cannot tell the other host's
# orted to stop, and keeps retransmitting for as long as the kernel lets TCP
# (tcp_retries2 = 15: about 15 minutes), so the job outlives the ranks. These
# per-namespace settings let a connection fail after about 6 s of silence
# (4 retransmissions from 200 ms doubling), and a reconnection after 3 s
# (1 SYN retry), after which mpirun reports the lost daemon and exits. A real
# cluster wanting the same bound sets the same sysctls on its hosts.
TCP_GIVE_UP = {"net.ipv4.tcp_retries2": 4, "net.ipv4.tcp_syn_retries": 1}


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=check)


def _tc(ns, *args):
    subprocess.run(["tc", "-n", ns, *args], capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=True)


def _namespaces():
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _kill_processes_in(ns):
    """SIGKILLs every process in namespace ns (SIGKILL also ends a stopped one)."""
    out = _ip("netns", "pids", ns, check=False).stdout
    for pid in out.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def _delete(ns):
    _kill_processes_in(ns)
    _ip("netns", "del", ns, check=False)


def _owner_gone(name):
    """True when name carries the prefix of a process that no longer exists."""
    m = re.match(re.escape(PREFIX) + r"(\d+)-", name)
    if not m:
        return False
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    return False


def sweep_stale():
    """Removes the namespaces and launch files of earlier test processes
    that have died (killed before their cleanup)."""
    for ns in _namespaces():
        if _owner_gone(ns):
            _delete(ns)
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if _owner_gone(name):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)


def unavailable():
    """Why namespaces cannot be made here ('' when they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (Debian package iproute2)"
    return ""


class TestHosts:
    """n hosts; use as a context manager. rate/burst/latency: tc tbf's."""

    def __init__(self, n=2, rate="1gbit", burst="256kb", latency="50ms"):
        self.n = n
        self.prefix = f"{PREFIX}{os.getpid()}-"
        self.hosts = [f"{self.prefix}h{i}" for i in range(n)]
        self.switch = f"{self.prefix}sw"
        self.addresses = [f"{SUBNET}.{i + 1}" for i in range(n)]
        self.tbf = ["tbf", "rate", rate, "burst", burst, "latency", latency]
        self.dir = None
        self._old_handlers = {}

    # Setup and teardown -------------------------------------------------

    def __enter__(self):
        sweep_stale()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _on_signal(self, signum, frame):
        # Not sys.exit: unittest would catch the SystemExit and go on. The
        # process ends by the signal itself, once the hosts are gone.
        self.close()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def _create(self):
        self.dir = tempfile.mkdtemp(prefix=self.prefix)
        for ns in [self.switch, *self.hosts]:
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        for ns in self.hosts:
            # Note [Dead links]: TCP in these hosts gives up on a silent peer
            # in seconds, not the kernel's default quarter of an hour.
            for key, value in TCP_GIVE_UP.items():
                subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}"],
                               capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=True)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, (ns, addr) in enumerate(zip(self.hosts, self.addresses)):
            port = f"p{i}"
            # Both ends are made inside their namespaces: no name is taken
            # in the root namespace, even for a moment.
            _ip("link", "add", IFACE, "netns", ns, "type", "veth", "peer", "name", port, "netns", self.switch)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", IFACE)
            _ip("-n", self.switch, "link", "set", port, "master", "br0")
            _tc(ns, "qdisc", "add", "dev", IFACE, "root", *self.tbf)  # host -> switch
            _tc(self.switch, "qdisc", "add", "dev", port, "root", *self.tbf)  # switch -> host
            _ip("-n", ns, "link", "set", IFACE, "up")
            _ip("-n", self.switch, "link", "set", port, "up")
        self._write_launch_files()

    def close(self):
        """Kills every process in the hosts and removes them (idempotent)."""
        for ns in [*self.hosts, self.switch]:
            if ns in _namespaces():
                _delete(ns)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)
        self._old_handlers = {}

    def _write_launch_files(self):
        self.hostfile = os.path.join(self.dir, "hostfile")
        with open(self.hostfile, "w") as f:
            f.writelines(f"{a} slots=1\n" for a in self.addresses)
        # Open MPI calls the agent as `agent HOST COMMAND...`, like ssh, and
        # COMMAND is a shell command line (environment settings, then orted).
        cases = "".join(f"  {a}) ns={ns} ;;\n" for a, ns in zip(self.addresses, self.hosts))
        self.agent = os.path.join(self.dir, "agent.sh")
        with open(self.agent, "w") as f:
            f.write("#!/bin/sh\n"
                    "# plm_rsh_agent: starts COMMAND in the namespace of HOST instead of over ssh.\n"
                    'host=$1; shift\n'
                    'case "$host" in\n'
                    f"{cases}"
                    '  *) echo "agent.sh: no test host $host" >&2; exit 1 ;;\n'
                    'esac\n'
                    'exec ip netns exec "$ns" /bin/sh -c "$*"\n')
        os.chmod(self.agent, 0o755)

    # Use ----------------------------------------------------------------

    def mpirun_cmd(self, mpirun, program, *args):
        """A command line that runs mpirun in host 0 with one rank per host,
        over TCP on the test links only."""
        return ["ip", "netns", "exec", self.hosts[0], mpirun, "-np", str(self.n), "--hostfile", self.hostfile,
                "--bind-to", "none",
                "--mca", "plm_rsh_agent", self.agent,
                "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", IFACE,
                "--mca", "oob_tcp_if_include", IFACE,
                program, *args]

    def set_link(self, i, up):
        """Takes host i's link down or up (nothing once closed)."""
        if self.dir is None:
            return
        _ip("-n", self.hosts[i], "link", "set", IFACE, "up" if up else "down")

    def pids(self, i):
        """The processes in host i."""
        return [int(p) for p in _ip("netns", "pids", self.hosts[i], check=False).stdout.split()]

    def kill_processes(self):
        """SIGKILLs every process left in the hosts (a job cut off by a dead link)."""
        if self.dir is None:
            return
        for ns in self.hosts:
            _kill_processes_in(ns)
