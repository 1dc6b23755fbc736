"""The attack suite: what a hostile handler can do at each isolation tier.

EXPECTED is the contract, one column per tier (1 namespaces, 2 landlock-seccomp, 3 rlimits), for a host
running the platform as root (CI's kind). A cell is OPEN (the attack achieved its goal), BLOCKED (it did
not, however it failed), or the error that blocked it, which names the layer doing the work:
  ENOENT       not mounted: tier 1's empty root (mount namespace); EROFS: mounted read-only there
  EACCES       Landlock (tiers 1-2) or, at tier 3, file modes against the unprivileged sandbox uid
  EPERM        the seccomp filter (tiers 1-2) or, at tier 3, the call's own uid against other processes
  EAGAIN       RLIMIT_NPROC=0 for the call's uid (tier 3)
  ENOENT       (SysV IPC, POSIX message queues at tier 3) the call's own IPC namespace
  RuntimeError (threads) RLIMIT_NPROC of the call's own uid: max_threads at tiers 1-2, none at tier 3
  ENOSPC       the call slot's own tmpfs (every tier)
  EMFILE, MemoryError, ValueError, HandlerFailed:handler_timeout   the resource limits (every tier)
  ModuleNotFoundError, NotFound   no site-packages on the path / the broker's capability (every tier)
Every row is blocked at tier 1, the strongest tier, which is what this machine runs
(``test_this_host_runs_the_strongest_tier``).

Each attack handler reports {"open": bool, "errno": name, "detail": ...}; see PRELUDE.
"""

import ctypes
import os
import shutil
import socket
import sysconfig
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

import apps_runtime
from apps_runtime.sandbox import BrokerError, HandlerFailed, Invocation, SandboxLimits

from .bundles import write_bundle
from .conftest import TIERS

_LIBC = ctypes.CDLL(None, use_errno=True)
OPEN = "open"
BLOCKED = "blocked"
AS_ROOT = os.geteuid() == 0


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


# A local service the host reaches is reachable from tier 3; one that is not running refuses everybody.
POSTGRES_AT_3 = OPEN if _listening(5432) else "ECONNREFUSED"
REDIS_AT_3 = OPEN if _listening(6379) else "ECONNREFUSED"


def _others_can_read(path: Path) -> bool:
    """Whether uid 65534 can reach ``path`` through file modes alone (every parent searchable)."""
    if not os.access(path, os.R_OK) or not path.stat().st_mode & 0o004:
        return False
    return all(parent.stat().st_mode & 0o001 for parent in path.resolve().parents)


# At tier 3 only file modes stand between the sandbox uid and the host's files: a checkout in an
# owner-only folder (mktemp -d) keeps its source, and the venv's site-packages, out of reach.
SOURCE_AT_3 = OPEN if _others_can_read(Path(apps_runtime.__file__).parent / "dispatch.py") else "EACCES"
DJANGO_AT_3 = (
    OPEN
    if _others_can_read(Path(sysconfig.get_paths()["purelib"]) / "django" / "__init__.py")
    else "ModuleNotFoundError"
)

# fmt: off
EXPECTED = {
    # attack                                          tier 1        tier 2         tier 3
    "read_own_environment":                          (BLOCKED,      BLOCKED,       BLOCKED),
    "read_the_zygote_environment":                   ("ENOENT",     "EACCES",      "EACCES"),
    "read_the_web_process_environment":              ("ENOENT",     "EACCES",      "EACCES"),
    "read_pid_1_environment":                        ("ENOENT",     "EACCES",      "EACCES"),
    "read_etc_passwd":                               ("ENOENT",     "EACCES",      OPEN),
    "read_the_database_file":                        ("ENOENT",     "EACCES",      "EACCES"),
    "read_a_var_secret":                             ("ENOENT",     "EACCES",      "EACCES"),
    "read_the_project_source":                       ("ENOENT",     "EACCES",      SOURCE_AT_3),
    "read_another_apps_bundle":                      ("EACCES",     "EACCES",      OPEN),
    "import_django":                                 ("ModuleNotFoundError",) * 3,
    "import_django_from_the_hosts_site_packages":    ("ModuleNotFoundError",) * 2 + (DJANGO_AT_3,),
    "write_into_the_bundle":                         ("EROFS",      "EACCES",      "EACCES"),
    "write_outside_the_scratch_dir":                 ("EACCES",     "EACCES",      OPEN),
    "tcp_connect_to_postgresql":                     ("EPERM",      "EPERM",       POSTGRES_AT_3),
    "tcp_connect_to_redis":                          ("EPERM",      "EPERM",       REDIS_AT_3),
    "tcp_connect_to_the_platforms_own_port":         ("EPERM",      "EPERM",       OPEN),
    "connect_to_a_unix_socket_of_the_host":          ("EPERM",      "EPERM",       OPEN),
    "fork":                                          ("EPERM",      "EPERM",       "EAGAIN"),
    "exec_a_shell":                                  ("EPERM",      "EPERM",       OPEN),
    "run_a_command_with_os_system":                  (BLOCKED,      BLOCKED,       BLOCKED),
    "create_a_user_namespace":                       ("EPERM",      "EPERM",       OPEN),
    "signal_the_zygote":                             ("EPERM",      "EPERM",       "EPERM"),
    "signal_the_web_process":                        ("EPERM",      "EPERM",       "EPERM"),
    "signal_a_concurrent_handler":                   ("EPERM",      "EPERM",       "EPERM"),
    "ptrace_the_zygote":                             ("EPERM",      "EPERM",       "EPERM"),
    "open_the_zygotes_memory":                       ("ENOENT",     "EACCES",      "EACCES"),
    "raise_own_memory_limit":                        ("ValueError",) * 3,
    "exhaust_memory":                                ("MemoryError",) * 3,
    "exhaust_cpu":                                   ("HandlerFailed:handler_timeout",) * 3,
    "exhaust_file_descriptors":                      ("EMFILE",) * 3,
    "exhaust_threads":                               ("RuntimeError",) * 3,
    "exhaust_scratch_space":                         ("ENOSPC",) * 3,
    "create_sysv_shared_memory":                     ("EPERM",      "EPERM",       OPEN),
    "create_an_in_memory_file":                      ("EPERM",      "EPERM",       OPEN),
    "grow_a_pipe_buffer":                            ("EPERM",      "EPERM",       OPEN),
    "reach_sysv_shared_memory_of_an_earlier_call":   ("EPERM",      "EPERM",       "ENOENT"),
    "reach_the_hosts_sysv_shared_memory":            ("EPERM",      "EPERM",       "ENOENT"),
    "reach_a_posix_message_queue_of_an_earlier_call": ("EPERM",     "EPERM",       "ENOENT"),
    "reach_another_tenants_records":                 ("NotFound",) * 3,
}
# fmt: on

PRELUDE = '''
import ctypes, errno, os, socket, sys


def _outcome(attempt):
    try:
        result = attempt()
    except OSError as exc:
        return {"open": False, "errno": errno.errorcode.get(exc.errno, str(exc.errno)), "detail": repr(exc)}
    except BaseException as exc:
        return {"open": False, "errno": type(exc).__name__, "detail": repr(exc)}
    return {"open": bool(result), "errno": None, "detail": repr(result)[:300]}


def _read(path):
    with open(path, "rb") as f:
        f.read(64)
    return True


def _write(path):
    with open(path, "w") as f:
        f.write("planted")
    return True


def _connect(family, address):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(address)
    return True


def _fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return True


def _spin():
    while True:
        pass


def _libc_call(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return True


def _libc_handle(name, *args):
    """A libc call that returns an id or a descriptor, -1 on failure."""
    libc = ctypes.CDLL(None, use_errno=True)
    result = getattr(libc, name)(*args)
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _shared_memory(key, create):
    flags = (0o1000 | 0o666) if create else 0  # IPC_CREAT
    return _libc_handle("shmget", key, (1 << 20) if create else 0, flags) >= 0


def _message_queue(name, create):
    flags = (0o100 | 0o2) if create else 0o2  # O_CREAT | O_RDWR
    return _libc_handle("mq_open", name.encode(), flags, 0o666, None) >= 0


def _threads(count=100):
    """Start ``count`` threads that wait; True if they all started (max_threads did not stop them)."""
    import threading
    threading.stack_size(64 * 1024)  # small stacks: RLIMIT_AS alone would allow thousands
    release = threading.Event()
    try:
        for _ in range(count):
            threading.Thread(target=release.wait).start()
    finally:
        release.set()
    return True


def _fill_scratch(files=20, size=10 << 20):
    """Write ``files`` files of ``size`` bytes into the scratch dir (the cwd)."""
    chunk = b"x" * (1 << 20)
    for n in range(files):
        with open(f"fill-{n}", "wb") as f:
            for _ in range(size // len(chunk)):
                f.write(chunk)
    return True
'''

ATTACKS = {
    "read_own_environment": "lambda: dict(os.environ)",
    "read_the_zygote_environment": 'lambda: _read(f"/proc/{os.getppid()}/environ")',
    "read_the_web_process_environment": "lambda: _read(f\"/proc/{body['host_pid']}/environ\")",
    "read_pid_1_environment": 'lambda: _read("/proc/1/environ")',
    "read_etc_passwd": 'lambda: _read("/etc/passwd")',
    "read_the_database_file": 'lambda: _read(body["database"])',
    "read_a_var_secret": 'lambda: _read(body["secret"])',
    "read_the_project_source": 'lambda: _read(body["source"])',
    "read_another_apps_bundle": 'lambda: _read(body["other_bundle_file"])',
    "import_django": 'lambda: __import__("django")',
    "import_django_from_the_hosts_site_packages": (
        'lambda: sys.path.append(body["site_packages"]) or __import__("django")'
    ),
    "write_into_the_bundle": 'lambda: _write(os.path.join(sys.path[0], "planted.py"))',
    "write_outside_the_scratch_dir": 'lambda: _write(body["tmp_file"])',
    "tcp_connect_to_postgresql": 'lambda: _connect(socket.AF_INET, ("127.0.0.1", 5432))',
    "tcp_connect_to_redis": 'lambda: _connect(socket.AF_INET, ("127.0.0.1", 6379))',
    "tcp_connect_to_the_platforms_own_port": 'lambda: _connect(socket.AF_INET, ("127.0.0.1", body["port"]))',
    "connect_to_a_unix_socket_of_the_host": 'lambda: _connect(socket.AF_UNIX, body["unix_socket"])',
    "fork": "_fork",
    "exec_a_shell": 'lambda: os.execv("/bin/sh", ["sh", "-c", "echo EXECUTED-A-SHELL"])',
    "run_a_command_with_os_system": 'lambda: os.system("echo RAN-A-COMMAND") == 0',
    "create_a_user_namespace": 'lambda: _libc_call("unshare", 0x10000000)',  # CLONE_NEWUSER
    "signal_the_zygote": "lambda: os.kill(os.getppid(), 0) or True",
    "signal_the_web_process": 'lambda: os.kill(body["host_pid"], 0) or True',
    "signal_a_concurrent_handler": 'lambda: os.kill(body["victim_pid"], 0) or True',
    "ptrace_the_zygote": (  # PTRACE_ATTACH, then PTRACE_DETACH if it worked
        'lambda: _libc_call("ptrace", 16, os.getppid(), 0, 0)'
        ' and _libc_call("ptrace", 17, os.getppid(), 0, 0)'
    ),
    "open_the_zygotes_memory": 'lambda: open(f"/proc/{os.getppid()}/mem", "rb").close() or True',
    "raise_own_memory_limit": (
        "lambda: __import__('resource').setrlimit(__import__('resource').RLIMIT_AS, (-1, -1)) or True"
    ),
    "exhaust_memory": "lambda: len(bytearray(2 << 30))",
    "exhaust_cpu": "_spin",
    "exhaust_file_descriptors": "lambda: [os.dup(0) for _ in range(100_000)]",
    "reach_another_tenants_records": 'lambda: request.records.get("cases", body["other_tenants_record"])',
    "exhaust_threads": "_threads",
    "exhaust_scratch_space": "_fill_scratch",
    "create_sysv_shared_memory": "lambda: _shared_memory(0, True)",  # IPC_PRIVATE
    "create_an_in_memory_file": 'lambda: os.close(os.memfd_create("hoard")) or True',
    # fcntl(F_SETPIPE_SZ, 1 MiB)
    "grow_a_pipe_buffer": "lambda: __import__('fcntl').fcntl(os.pipe()[1], 1031, 1 << 20) and True",
    "reach_sysv_shared_memory_of_an_earlier_call": 'lambda: _shared_memory(body["ipc_key"], False)',
    "reach_the_hosts_sysv_shared_memory": 'lambda: _shared_memory(body["host_ipc_key"], False)',
    "reach_a_posix_message_queue_of_an_earlier_call": 'lambda: _message_queue(body["mq_name"], False)',
}
# Run first, in a call of their own (another tenant's, earlier): what the attack then tries to reach.
PLANTED_BY_AN_EARLIER_CALL = {
    "reach_sysv_shared_memory_of_an_earlier_call": 'lambda: _shared_memory(body["ipc_key"], True)',
    "reach_a_posix_message_queue_of_an_earlier_call": 'lambda: _message_queue(body["mq_name"], True)',
}


def handler_source(attack: str, code: str | None = None) -> str:
    return (
        PRELUDE
        + f"""

def handle(request):
    body = request.body
    return _outcome({code or ATTACKS[attack]})
"""
    )


@pytest.fixture
def targets(bundles_root):
    """What the attacks aim at, standing in for the platform's own assets."""
    var = Path(tempfile.mkdtemp(prefix="sandbox-var-"))
    var.chmod(0o711)  # traversable, so only the files' own modes protect them (as the platform must set)
    database = var / "platform.sqlite3"
    database.write_bytes(b"SQLite format 3\x00 tenant-b-secret")
    database.chmod(0o600)
    secret = var / "dev-secret-key"
    secret.write_text("django-insecure-secret")
    secret.chmod(0o600)
    other_bundle = Path(tempfile.mkdtemp(prefix="other-app-", dir=bundles_root))
    other_bundle.chmod(0o755)
    (other_bundle / "secret.py").write_text("API_KEY = 'tenant-b-secret'\n")
    (other_bundle / "secret.py").chmod(0o644)
    unix_path = var / "service.sock"
    unix_server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_server.bind(str(unix_path))
    unix_path.chmod(0o777)
    unix_server.listen()
    tcp_server = socket.create_server(("127.0.0.1", 0))
    tmp_file = Path("/tmp") / f"sandbox-attack-{uuid.uuid4().hex}"
    host_ipc_key = int.from_bytes(os.urandom(3), "big") + 1
    host_segment = _LIBC.shmget(host_ipc_key, 4096, 0o1000 | 0o666)  # IPC_CREAT; readable by all
    assert host_segment >= 0
    body = {
        "host_pid": os.getpid(),
        "database": str(database),
        "secret": str(secret),
        "source": str(Path(apps_runtime.__file__).parent / "dispatch.py"),
        "other_bundle_file": str(other_bundle / "secret.py"),
        "site_packages": sysconfig.get_paths()["purelib"],
        "tmp_file": str(tmp_file),
        "port": tcp_server.getsockname()[1],
        "unix_socket": str(unix_path),
        "other_tenants_record": "b-1",
        "host_ipc_key": host_ipc_key,
        "ipc_key": host_ipc_key + 1,
        "mq_name": f"/sandbox-attack-{uuid.uuid4().hex}",
    }
    assert os.path.exists(body["source"])
    yield body
    _LIBC.shmctl(host_segment, 0, None)  # IPC_RMID
    planted = _LIBC.shmget(body["ipc_key"], 0, 0)  # left in the host's namespace only if unisolated
    if planted >= 0:
        _LIBC.shmctl(planted, 0, None)
    _LIBC.mq_unlink(body["mq_name"].encode())
    tcp_server.close()
    unix_server.close()
    tmp_file.unlink(missing_ok=True)
    shutil.rmtree(var, ignore_errors=True)
    shutil.rmtree(other_bundle, ignore_errors=True)


def tenant_a_broker(op: str, args: dict):
    """Tenant A's capability: the broker resolves ids within tenant A only."""
    records = {"a-1": {"id": "a-1", "tenant": "a"}}
    if op == "records.get" and args.get("id") in records:
        return records[args["id"]]
    raise BrokerError("not_found", "no such record")


def observe(result) -> tuple[str, str]:
    """(OPEN or BLOCKED, how) from a handler's outcome or failure."""
    if isinstance(result, HandlerFailed):
        if "EXECUTED-A-SHELL" in result.logs or "RAN-A-COMMAND" in result.logs:
            return OPEN, "the shell ran"
        return BLOCKED, f"HandlerFailed:{result.kind}"
    body = result.body
    return (OPEN if body["open"] else BLOCKED), body["errno"] or body["detail"]


# The two ways a call runs: a fresh child for the call alone ("isolation": "call"), or a warm worker of its
# app version. In "warm" mode the attack is the worker's second call (its first is a harmless one), so it
# runs in a child that already served a call and stays for the next.
MODES = ("call", "warm")
HARMLESS = "def handle(request):\n    return {'open': False, 'errno': None, 'detail': 'harmless'}\n"


def warm_key(mode: str, tenant: str, bundle_dir) -> str | None:
    return f"{tenant}:{bundle_dir}:v1" if mode == "warm" else None


def attempt(box, bundle_dir, attack: str, body: dict, mode: str = "call"):
    if attack in PLANTED_BY_AN_EARLIER_CALL:
        plant = handler_source(attack, PLANTED_BY_AN_EARLIER_CALL[attack])
        write_bundle(bundle_dir, {"server/plant.py": plant})
        planted_by = warm_key(mode, "tenant-b", bundle_dir)
        box.run(
            Invocation(
                str(bundle_dir), "server/plant.py", {"body": body}, tenant_key="tenant-b", warm_key=planted_by
            ),
            tenant_a_broker,
        )
    write_bundle(bundle_dir, {"server/attack.py": handler_source(attack), "server/harmless.py": HARMLESS})
    limits = SandboxLimits(timeout_ms=300) if attack == "exhaust_cpu" else SandboxLimits()
    key = warm_key(mode, "tenant-a", bundle_dir)
    if key is not None:
        box.run(
            Invocation(str(bundle_dir), "server/harmless.py", {}, limits, "tenant-a", key), tenant_a_broker
        )
        starts = box.pool_stats()["starts"]
    invocation = Invocation(str(bundle_dir), "server/attack.py", {"body": body}, limits, "tenant-a", key)
    try:
        return box.run(invocation, tenant_a_broker)
    except HandlerFailed as failed:
        return failed
    finally:
        if key is not None:  # the attack ran in the worker that served the harmless call
            assert box.pool_stats()["starts"] == starts


def attempt_on_a_concurrent_handler(box, bundle_dir, body: dict, mode: str = "call"):
    """Start a victim handler that reports its pid and waits, then attack it from another handler."""
    write_bundle(
        bundle_dir,
        {
            "server/victim.py": """
        import os

        def handle(request):
            request.records.get("pid", str(os.getpid()))
            request.records.get("wait", "")  # answered once the attack is over
            return "survived"
    """
        },
    )
    victim_pid: list[int] = []
    reported, attacked = threading.Event(), threading.Event()

    def victim_broker(op, args):
        if args["collection"] == "pid":
            victim_pid.append(int(args["id"]))
            reported.set()
        else:
            attacked.wait(10)
        return {}

    victim_result = []
    victim = threading.Thread(
        target=lambda: victim_result.append(
            box.run(
                Invocation(
                    str(bundle_dir), "server/victim.py", {}, warm_key=warm_key(mode, "tenant-b", bundle_dir)
                ),
                victim_broker,
            )
        )
    )
    victim.start()
    try:
        assert reported.wait(10), "the victim handler did not start"
        return attempt(
            box, bundle_dir, "signal_a_concurrent_handler", {**body, "victim_pid": victim_pid[0]}, mode
        )
    finally:
        attacked.set()
        victim.join(10)
        assert victim_result and victim_result[0].body == "survived"


def run_attack(box, bundle_dir, attack: str, body: dict, mode: str = "call"):
    if attack == "signal_a_concurrent_handler":
        return attempt_on_a_concurrent_handler(box, bundle_dir, body, mode)
    return attempt(box, bundle_dir, attack, body, mode)


def check(expected: str, result) -> None:
    observed, how = observe(result)
    if expected == OPEN:
        assert observed == OPEN, f"expected the attack to succeed at this tier, it failed: {how}"
    elif expected == BLOCKED:
        assert observed == BLOCKED, f"the attack succeeded: {how}"
    else:
        assert (observed, how) == (BLOCKED, expected), f"expected blocked by {expected}: {observed}, {how}"


def test_every_attack_has_an_expectation_per_tier():
    assert set(ATTACKS) == set(EXPECTED)
    assert all(len(row) == len(TIERS) for row in EXPECTED.values())


def test_this_host_runs_the_strongest_tier(sandbox):
    """CI's host (this kind of machine, as root, with bubblewrap): the probe must pick tier 1."""
    assert sandbox.tier == "namespaces", sandbox.tier_report
    assert all(row[0] != OPEN for row in EXPECTED.values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("attack", sorted(EXPECTED))
def test_attack_is_blocked_by_the_sandbox_the_platform_runs(sandbox, bundle_dir, targets, attack, mode):
    """The probed sandbox, as the platform gets it from get_sandbox(): every row is blocked."""
    result = run_attack(sandbox, bundle_dir, attack, targets, mode)

    check(EXPECTED[attack][sandbox.tier_level - 1], result)
    assert observe(result)[0] == BLOCKED


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("attack", sorted(EXPECTED))
def test_attack_at_each_forced_tier(sandbox_at, bundle_dir, targets, attack, tier, mode):
    if tier == 3 and not AS_ROOT:
        pytest.skip("tier 3's expectations assume the platform runs as root (and drops to the sandbox uid)")
    result = run_attack(sandbox_at(tier), bundle_dir, attack, targets, mode)

    check(EXPECTED[attack][tier - 1], result)


def test_subprocess_output_would_go_to_the_logs_not_the_protocol(run_at):
    """With every block lifted (tier 4, a bare fork), a subprocess still cannot corrupt the protocol."""
    outcome = run_at(
        4,
        """
        import os

        def handle(request):
            return os.system("id")
    """,
    )

    assert outcome.body == 0
    assert "uid=" in outcome.logs
