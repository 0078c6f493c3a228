"""A minimal seccomp filter for the sandboxed child, assembled as classic BPF by hand.

No binding to libseccomp: the filter is short enough to write out, and building it here keeps
the child free of third-party code. Standard library only (part of the launcher).

What it refuses, with EPERM: sockets, every exec, process creation (clone without
CLONE_THREAD, fork, vfork; clone3 answers ENOSYS so libc falls back to clone, whose flags we
can read), ptrace and cross-process memory, mount and namespaces, module and kexec loading,
bpf, perf, keyrings, io_uring (whose operations seccomp cannot see), raising a resource limit,
changing credentials, signals to any process but this one, faking terminal input, and
closing or replacing the channel the walls report on. Everything else is allowed. A foreign
architecture (a 32-bit or x32 syscall from a 64-bit process) is killed.
"""

import ctypes
import os
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
EPERM = 1
ENOSYS = 38
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x7E020080  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
TIOCSTI = 0x5412
TIOCLINUX = 0x541C

# BPF opcodes
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JGT_K = 0x25
JSET_K = 0x45
RET_K = 0x06
OFF_NR = 0
OFF_ARCH = 4

ARCHES = {
    "x86_64": {
        "audit_arch": 0xC000003E,
        "x32_bit": 0x40000000,
        "deny": {
            "socket": 41,
            "connect": 42,
            "accept": 43,
            "bind": 49,
            "listen": 50,
            "socketpair": 53,
            "accept4": 288,
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "execveat": 322,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "process_madvise": 440,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "unshare": 272,
            "setns": 308,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "name_to_handle_at": 303,
            "open_by_handle_at": 304,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "setrlimit": 160,
            "setuid": 105,
            "setgid": 106,
            "setreuid": 113,
            "setregid": 114,
            "setgroups": 116,
            "setresuid": 117,
            "setresgid": 119,
            "setfsuid": 122,
            "setfsgid": 123,
            "capset": 126,
            "personality": 135,
            "modify_ldt": 154,
            "iopl": 172,
            "ioperm": 173,
            "acct": 163,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "sethostname": 170,
            "setdomainname": 171,
            "quotactl": 179,
            "vhangup": 153,
            "tkill": 200,
            "fanotify_init": 300,
            "move_pages": 279,
            "migrate_pages": 256,
        },
        "clone": 56,
        "clone3": 435,
        "kill": 62,
        "tgkill": 234,
        "prlimit64": 302,
        "ioctl": 16,
        "close": 3,
        "dup2": 33,
        "dup3": 292,
        "close_range": 436,
    },
}


def _arg(i, high=False):
    return 16 + 8 * i + (4 if high else 0)


def build_filter(arch, own_pid, report_fd):
    """The filter program as (code, jt, jf, k) tuples, for an architecture in ARCHES."""
    t = ARCHES[arch]
    prog = []  # entries: (code, jt, jf, k) with jt/jf as labels or ints

    def emit(code, k, jt=0, jf=0):
        prog.append([code, jt, jf, k])

    emit(LD_W_ABS, OFF_ARCH)
    emit(JEQ_K, t["audit_arch"], 1, 0)
    emit(RET_K, RET_KILL_PROCESS)
    emit(LD_W_ABS, OFF_NR)
    if t.get("x32_bit"):
        emit(JGE_K, t["x32_bit"], "kill", 0)
    for nr in sorted(t["deny"].values()):
        emit(JEQ_K, nr, "deny", 0)
    emit(JEQ_K, t["clone3"], "enosys", 0)
    branches = [
        ("clone", "b_clone"),
        ("kill", "b_kill"),
        ("tgkill", "b_kill"),
        ("prlimit64", "b_prlimit"),
        ("ioctl", "b_ioctl"),
        ("close", "b_fd0"),
        ("dup2", "b_fd1"),
        ("dup3", "b_fd1"),
        ("close_range", "b_range"),
    ]
    for name, label in branches:
        emit(JEQ_K, t[name], label, 0)
    emit(RET_K, RET_ALLOW)
    labels = {}

    def mark(name):
        labels[name] = len(prog)

    mark("b_clone")  # threads only, and no new namespaces
    emit(LD_W_ABS, _arg(0))
    emit(JSET_K, CLONE_NAMESPACES, "deny", 0)
    emit(JSET_K, CLONE_THREAD, "allow", "deny")
    mark("b_kill")  # kill(pid, sig) / tgkill(tgid, tid, sig): only this process
    emit(LD_W_ABS, _arg(0, high=True))
    emit(JEQ_K, 0, 0, "deny")
    emit(LD_W_ABS, _arg(0))
    emit(JEQ_K, own_pid, "allow", "deny")
    mark("b_prlimit")  # prlimit64(pid, resource, new, old): reading is fine, setting is not
    emit(LD_W_ABS, _arg(2))
    emit(JEQ_K, 0, 0, "deny")
    emit(LD_W_ABS, _arg(2, high=True))
    emit(JEQ_K, 0, "allow", "deny")
    mark("b_ioctl")
    emit(LD_W_ABS, _arg(1))
    emit(JEQ_K, TIOCSTI, "deny", 0)
    emit(JEQ_K, TIOCLINUX, "deny", "allow")
    mark("b_fd0")  # close(report_fd)
    emit(LD_W_ABS, _arg(0))
    emit(JEQ_K, report_fd, "deny", "allow")
    mark("b_fd1")  # dup2/dup3(old, report_fd)
    emit(LD_W_ABS, _arg(1))
    emit(JEQ_K, report_fd, "deny", "allow")
    mark("b_range")  # close_range(first, last, flags) covering report_fd
    emit(LD_W_ABS, _arg(0))
    emit(JGT_K, report_fd, "allow", 0)
    emit(LD_W_ABS, _arg(1))
    emit(JGE_K, report_fd, "deny", "allow")
    mark("allow")
    emit(RET_K, RET_ALLOW)
    mark("deny")
    emit(RET_K, RET_ERRNO | EPERM)
    mark("enosys")
    emit(RET_K, RET_ERRNO | ENOSYS)
    mark("kill")
    emit(RET_K, RET_KILL_PROCESS)

    return _resolve_jumps(prog, labels)


def _resolve_jumps(prog, labels):
    """Each label a jump names turned into the relative offset BPF wants (0..255)."""
    out = []
    for i, (code, jt, jf, k) in enumerate(prog):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError("seccomp filter jump out of range")
        out.append((code, jt, jf, k & 0xFFFFFFFF))
    return out


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def install_seccomp(libc, report_fd):
    """Load the filter into this process; returns (True, detail) or (False, reason)."""
    arch = os.uname().machine
    if arch not in ARCHES:
        return False, "no syscall table for architecture " + arch
    prog = build_filter(arch, os.getpid(), report_fd)
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.addressof(buf))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, "no_new_privs: " + os.strerror(ctypes.get_errno())
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return False, "seccomp filter: " + os.strerror(ctypes.get_errno())
    return True, f"{len(prog)} BPF instructions ({arch})"
