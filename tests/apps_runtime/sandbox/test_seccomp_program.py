"""The seccomp program, run in a classic-BPF emulator for every syscall number: it must decide exactly what
the lists in ``seccomp.py`` say, however the program is laid out (linear or a search tree).
"""

import errno
import struct

import pytest

from apps_runtime.sandbox.runtime import seccomp

PID = 4242
ALLOW, DENY, ENOSYS, KILL = "allow", "deny", "enosys", "kill"
OTHER_PID = 77
# Syscall numbers beyond the highest x86_64 one, so that the whole table and a margin are covered.
ALL_NUMBERS = range(0, 600)


def _run(program: bytes, nr: int, args: tuple[int, ...] = (), arch: int = seccomp.AUDIT_ARCH_X86_64) -> str:
    """Emulate the filter on one struct seccomp_data."""
    data = (
        struct.pack("=iI", nr, arch)
        + struct.pack("=Q", 0)
        + b"".join(struct.pack("=Q", a & 0xFFFFFFFFFFFFFFFF) for a in (*args, *[0] * (6 - len(args))))
    )
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = insns[pc]
        if op == seccomp._LD_ABS:
            (acc,) = struct.unpack_from("=I", data, k)
            pc += 1
        elif op in (seccomp._JEQ, seccomp._JGE, seccomp._JSET):
            taken = {seccomp._JEQ: acc == k, seccomp._JGE: acc >= k, seccomp._JSET: bool(acc & k)}[op]
            pc += 1 + (jt if taken else jf)
        elif op == seccomp._RET:
            if k == seccomp.RET_ALLOW:
                return ALLOW
            if k == seccomp.RET_KILL_PROCESS:
                return KILL
            return {seccomp.RET_ERRNO | errno.EPERM: DENY, seccomp.RET_ERRNO | errno.ENOSYS: ENOSYS}[k]
        else:
            raise AssertionError(f"unexpected opcode {op:#x} at {pc}")


@pytest.fixture(scope="module")
def program() -> bytes:
    template, patches = seccomp._program()
    values = {seccomp._PID: PID, seccomp._NEG_PID: -PID & 0xFFFFFFFF}
    for offset, name in patches:
        struct.pack_into("=I", template, offset, values[name])
    return bytes(template)


def _expected(nr: int, arg0: int) -> str:
    sys_nr = {v: k for k, v in seccomp.SYS.items()}
    name = sys_nr.get(nr)
    if name == "clone":
        return DENY if arg0 & seccomp.CLONE_NEW_ANY or not arg0 & seccomp.CLONE_THREAD else ALLOW
    if name == "clone3":
        return ENOSYS
    if name == "socketpair":
        return ALLOW if arg0 == seccomp.AF_UNIX else DENY
    if name == "kill":
        return ALLOW if arg0 in (PID, 0, -PID) else DENY
    if name == "setpriority":
        return ALLOW  # who (argument 1) is 0 in these cases
    if name in seccomp.SELF_ONLY:
        return ALLOW if arg0 in (0, PID) else DENY
    if name in seccomp.DENIED:
        return DENY
    return ALLOW


@pytest.mark.parametrize("arg0", [0, PID, OTHER_PID, -PID, seccomp.AF_UNIX, seccomp.CLONE_THREAD, 0x20000])
def test_every_syscall_gets_what_the_lists_say(program, arg0):
    wrong = {
        nr: (_run(program, nr, (arg0,)), _expected(nr, arg0))
        for nr in ALL_NUMBERS
        if _run(program, nr, (arg0,)) != _expected(nr, arg0)
    }
    assert wrong == {}


def test_setpriority_only_for_the_caller(program):
    nr = seccomp.SYS["setpriority"]
    assert _run(program, nr, (0, 0)) == ALLOW
    assert _run(program, nr, (0, OTHER_PID)) == DENY


def test_other_abis_are_refused_or_killed(program):
    assert _run(program, seccomp.X32_SYSCALL_BIT | 1) == DENY
    assert _run(program, 1, arch=0x40000003) == KILL  # i386


def test_every_listed_syscall_is_known():
    assert set(seccomp.DENIED) <= set(seccomp.SYS)
    assert set(seccomp.SELF_ONLY) <= set(seccomp.SYS)


def test_fcntl_may_not_grow_a_pipe_buffer(program):
    nr = seccomp.SYS["fcntl"]
    assert _run(program, nr, (5, seccomp.F_SETPIPE_SZ, 1 << 20)) == DENY
    assert _run(program, nr, (5, 1, 0)) == ALLOW  # F_GETFD, and every other command
    assert _run(program, nr, (5, 1030, 10)) == ALLOW  # F_DUPFD_CLOEXEC


def test_in_memory_files_are_refused(program):
    for name in ("memfd_create", "memfd_secret"):
        assert _run(program, seccomp.SYS[name], (0, 0)) == DENY


def test_setsockopt_may_not_size_a_sockets_buffers(program):
    nr = seccomp.SYS["setsockopt"]
    for optname in seccomp.SO_BUFFER_SIZES:
        assert _run(program, nr, (5, 1, optname)) == DENY
    assert _run(program, nr, (5, 1, 2)) == ALLOW  # SO_REUSEADDR, and every other option
