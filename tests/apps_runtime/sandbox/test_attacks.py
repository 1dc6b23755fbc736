"""What a hostile handler can do at this isolation tier ("rlimits": rlimits + empty environment + brokered
data, no namespaces, seccomp or Landlock).

EXPECTED is the contract: each attack is either "blocked" or "open at tier rlimits". The hardening tier
(bubblewrap/seccomp/Landlock, unprivileged uid) must flip the open rows to "blocked" and update this table.
Each attack handler reports {"open": bool, "detail": ...}: "open" means the attack achieved its goal.
"""

import os
import socket
import sysconfig

import pytest

BLOCKED = "blocked"
OPEN = "open at tier rlimits"
AS_ROOT = os.geteuid() == 0  # the kernel does not apply RLIMIT_NPROC to uid 0


def _has_capability(bit: int) -> bool:
    with open("/proc/self/status") as f:
        effective = next(line for line in f if line.startswith("CapEff:")).split()[1]
    return bool(int(effective, 16) >> bit & 1)


CAP_SYS_RESOURCE = 24
MAY_RAISE_HARD_LIMITS = _has_capability(CAP_SYS_RESOURCE)  # root in a container usually lacks it

EXPECTED = {
    "read_own_environment": BLOCKED,
    "import_django": BLOCKED,
    "import_django_from_the_hosts_site_packages": OPEN,  # the filesystem is not restricted yet
    "read_etc_passwd": OPEN,
    "read_a_file_outside_the_bundle_by_absolute_path": OPEN,  # e.g. the embedded SQLite database
    "read_the_web_process_environment_via_proc": OPEN,  # same uid: /proc/<host pid>/environ, with its secrets
    "write_into_the_bundle": OPEN,
    "tcp_connect_to_a_localhost_service": OPEN,  # e.g. PostgreSQL on 127.0.0.1:5432
    "fork": OPEN if AS_ROOT else BLOCKED,
    "os_system": OPEN if AS_ROOT else BLOCKED,
    "raise_own_memory_limit": OPEN if MAY_RAISE_HARD_LIMITS else BLOCKED,
    "signal_the_zygote": OPEN,  # same uid; a handler could kill the zygote (which is then replaced)
}

ATTACKS = {
    "read_own_environment": """
        import os

        def handle(request):
            with open("/proc/self/environ", "rb") as f:
                initial = f.read()
            return {"open": bool(os.environ) or bool(initial), "detail": sorted(os.environ)}
    """,
    "import_django": """
        def handle(request):
            try:
                from django.conf import settings  # noqa: F401
            except ImportError as exc:
                return {"open": False, "detail": str(exc)}
            return {"open": True, "detail": "imported"}
    """,
    "import_django_from_the_hosts_site_packages": """
        import sys

        def handle(request):
            sys.path.append(request.body["site_packages"])
            try:
                import django
            except ImportError as exc:
                return {"open": False, "detail": str(exc)}
            return {"open": True, "detail": django.get_version()}
    """,
    "read_etc_passwd": """
        def handle(request):
            try:
                with open("/etc/passwd") as f:
                    return {"open": "root:" in f.read(), "detail": "read"}
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
    """,
    "read_a_file_outside_the_bundle_by_absolute_path": """
        def handle(request):
            try:
                with open(request.body["path"], "rb") as f:
                    return {"open": b"tenant-b-secret" in f.read(), "detail": "read"}
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
    """,
    "read_the_web_process_environment_via_proc": """
        import os

        def handle(request):
            try:
                with open(f"/proc/{os.getppid()}/stat") as f:
                    host_pid = int(f.read().rsplit(")", 1)[1].split()[1])  # the zygote's parent
                with open(f"/proc/{host_pid}/environ", "rb") as f:
                    environ = f.read()
                return {"open": request.body["host_env_name"].encode() + b"=" in environ, "detail": host_pid}
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
    """,
    "write_into_the_bundle": """
        import os, sys

        def handle(request):
            try:
                with open(os.path.join(sys.path[0], "planted.py"), "w") as f:
                    f.write("PLANTED = True\\n")
                return {"open": True, "detail": "wrote"}
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
    """,
    "tcp_connect_to_a_localhost_service": """
        import socket

        def handle(request):
            try:
                with socket.create_connection(("127.0.0.1", request.body["port"]), timeout=2):
                    return {"open": True, "detail": "connected"}
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
    """,
    "fork": """
        import os

        def handle(request):
            try:
                pid = os.fork()
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            return {"open": True, "detail": "forked"}
    """,
    "os_system": """
        import os

        def handle(request):
            status = os.system("id")
            return {"open": status == 0, "detail": status}
    """,
    "raise_own_memory_limit": """
        import resource

        def handle(request):
            try:
                resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            except (ValueError, OSError) as exc:
                return {"open": False, "detail": repr(exc)}
            return {"open": True, "detail": "raised"}
    """,
    "signal_the_zygote": """
        import os

        def handle(request):
            try:
                os.kill(os.getppid(), 0)  # signal 0: checks the permission to signal, harms nothing
            except OSError as exc:
                return {"open": False, "detail": repr(exc)}
            return {"open": True, "detail": "may signal"}
    """,
}


@pytest.fixture
def localhost_service():
    """A listening TCP socket standing in for a database on localhost."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.fixture
def tenant_b_database(tmp_path):
    """A file outside the bundle, standing in for the embedded SQLite database."""
    path = tmp_path / "db.sqlite3"
    path.write_bytes(b"SQLite format 3\x00 tenant-b-secret")
    return str(path)


def test_every_attack_has_an_expectation():
    assert set(ATTACKS) == set(EXPECTED)


@pytest.mark.parametrize("attack", sorted(EXPECTED))
def test_attack_behaves_as_expected_at_this_tier(run_handler, attack, localhost_service, tenant_b_database):
    with open("/proc/self/environ", "rb") as f:  # what /proc shows: the environment this process started with
        host_env_names = [entry.split(b"=", 1)[0].decode() for entry in f.read().split(b"\0") if entry]
    if attack == "read_the_web_process_environment_via_proc" and not host_env_names:
        pytest.skip("this test process started with an empty environment")
    body = {
        "host_env_name": host_env_names[0] if host_env_names else "",
        "site_packages": sysconfig.get_paths()["purelib"],
        "path": tenant_b_database,
        "port": localhost_service,
    }

    outcome = run_handler(ATTACKS[attack], {"body": body})

    observed = OPEN if outcome.body["open"] else BLOCKED
    assert observed == EXPECTED[attack], outcome.body["detail"]


def test_os_system_output_goes_to_the_logs_not_the_protocol(run_handler):
    if not AS_ROOT:
        pytest.skip("subprocesses are blocked by RLIMIT_NPROC for an unprivileged uid")

    outcome = run_handler(ATTACKS["os_system"])

    assert outcome.body["open"] is True
    assert "uid=" in outcome.logs
