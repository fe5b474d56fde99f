// The seccomp deny-list bubblewrap installs in front of sandboxed code (`bwrap --seccomp FD`):
// which syscalls fail and how, per CPU architecture, compiled to raw classic BPF.

/** Syscalls that always fail inside the sandbox (EPERM; `clone3` fails with ENOSYS). */
const DENIED = [
  // Reading or steering other processes.
  "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
  // Mount tables and root changes, old and new mount API.
  "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
  "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
  // New namespaces: each one reopens kernel attack surface the outer sandbox closed.
  "unshare", "setns", "clone3",
  // Kernel keyrings are not namespaced.
  "keyctl", "add_key", "request_key",
  // Large, bug-prone kernel subsystems that interpreters never need.
  "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
  // Kernel, modules, machine state.
  "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
  "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
  "name_to_handle_at", "open_by_handle_at", "lookup_dcookie", "iopl", "ioperm", "vhangup",
  // The clock is shared with the host.
  "clock_settime", "settimeofday", "adjtimex", "clock_adjtime",
] as const;

/** Syscalls allowed only with some arguments; see {@link SECCOMP_ARGUMENT_RULES}. */
type FilteredSyscall = "socket" | "clone" | "ioctl" | "personality";

type SyscallName = (typeof DENIED)[number] | FilteredSyscall;
/** `null` where the architecture has no such syscall (aarch64 has no iopl/ioperm). */
type SyscallTable = { readonly [K in SyscallName]: number | null };

export const SECCOMP_DENIED_SYSCALLS: readonly string[] = DENIED;

/** Human-readable argument rules, for `sandgate doctor` and the docs. */
export const SECCOMP_ARGUMENT_RULES: readonly string[] = [
  "socket: only AF_UNIX, AF_INET and AF_INET6; any other family fails with EAFNOSUPPORT",
  "clone: any CLONE_NEW* namespace flag fails with EPERM",
  "ioctl: TIOCSTI and TIOCLINUX fail with EPERM",
  "personality: only the query (0xffffffff) and PER_LINUX (0); anything else fails with EPERM",
  "other architectures' syscall ABIs (i386 on x86_64) kill the process; x32 syscalls fail with EPERM",
];

// Numbers from arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h.
const X86_64_SYSCALLS: SyscallTable = {
  ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438, kcmp: 312,
  mount: 165, umount2: 166, pivot_root: 155, chroot: 161, move_mount: 429, open_tree: 428,
  fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  unshare: 272, setns: 308, clone3: 435,
  keyctl: 250, add_key: 248, request_key: 249,
  bpf: 321, perf_event_open: 298, userfaultfd: 323, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427,
  kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176,
  reboot: 169, swapon: 167, swapoff: 168, syslog: 103, acct: 163, quotactl: 179, quotactl_fd: 443,
  name_to_handle_at: 303, open_by_handle_at: 304, lookup_dcookie: 212, iopl: 172, ioperm: 173, vhangup: 153,
  clock_settime: 227, settimeofday: 164, adjtimex: 159, clock_adjtime: 305,
  socket: 41, clone: 56, ioctl: 16, personality: 135,
};

const AARCH64_SYSCALLS: SyscallTable = {
  ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438, kcmp: 272,
  mount: 40, umount2: 39, pivot_root: 41, chroot: 51, move_mount: 429, open_tree: 428,
  fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  unshare: 97, setns: 268, clone3: 435,
  keyctl: 219, add_key: 217, request_key: 218,
  bpf: 280, perf_event_open: 241, userfaultfd: 282, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427,
  kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106,
  reboot: 142, swapon: 224, swapoff: 225, syslog: 116, acct: 89, quotactl: 60, quotactl_fd: 443,
  name_to_handle_at: 264, open_by_handle_at: 265, lookup_dcookie: 18, iopl: null, ioperm: null, vhangup: 58,
  clock_settime: 112, settimeofday: 170, adjtimex: 171, clock_adjtime: 266,
  socket: 198, clone: 220, ioctl: 29, personality: 92,
};

interface ArchSpec {
  auditArch: number;
  /** x86_64 only: the x32 ABI shares AUDIT_ARCH_X86_64 and is told apart by this bit in nr. */
  x32Bit: number | null;
  syscalls: SyscallTable;
}

const ARCHES: Partial<Record<NodeJS.Architecture, ArchSpec>> = {
  x64: { auditArch: 0xc000003e, x32Bit: 0x40000000, syscalls: X86_64_SYSCALLS },
  arm64: { auditArch: 0xc00000b7, x32Bit: null, syscalls: AARCH64_SYSCALLS },
};

export function isSeccompArchSupported(arch: NodeJS.Architecture = process.arch): boolean {
  return ARCHES[arch] !== undefined;
}

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const BPF_MAXINSNS = 4096;

const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

// struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }. Offsets of args name their
// low 32 bits, which is right on little-endian machines. The kernel reads only those bits of
// every argument checked below (int/unsigned int parameters; clone(2) truncates its flags),
// so a caller cannot slip past a rule by setting the high half.
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const argOffset = (index: number): number => 16 + 8 * index;

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const PERSONALITY_QUERY = 0xffffffff;
const PER_LINUX = 0;
// CLONE_NEWTIME (0x80) lies in the exit-signal byte of clone(2); no valid signal sets it, so
// denying it costs nothing and stays right if a kernel ever reads it there.
const CLONE_NEW_FLAGS =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

type Insn = readonly [code: number, jt: number, jf: number, k: number];

const stmt = (code: number, k: number): Insn => [code, 0, 0, k >>> 0];
const jump = (code: number, k: number, jt: number, jf: number): Insn => [code, jt, jf, k >>> 0];
const ret = (action: number): Insn => stmt(RET_K, action);
const errno = (code: number): number => RET_ERRNO | code;

/**
 * `body` runs only when the syscall number is `nr`. Bodies end in a return on every path,
 * because they overwrite the accumulator that later comparisons expect to hold nr.
 */
function onSyscall(nr: number | null, body: readonly Insn[]): Insn[] {
  if (nr === null) return [];
  return [jump(JEQ_K, nr, 0, body.length), ...body];
}

/** Return `match` if argument `index` equals one of `values`, else `otherwise`. */
function argIn(index: number, values: readonly number[], match: number, otherwise: number): Insn[] {
  const body: Insn[] = [stmt(LD_W_ABS, argOffset(index))];
  // Each comparison jumps over the remaining ones and the `otherwise` return.
  values.forEach((value, i) => body.push(jump(JEQ_K, value, values.length - i, 0)));
  body.push(ret(otherwise), ret(match));
  return body;
}

function buildInstructions(spec: ArchSpec): Insn[] {
  const nr = spec.syscalls;
  const program: Insn[] = [
    stmt(LD_W_ABS, OFFSET_ARCH),
    jump(JEQ_K, spec.auditArch, 1, 0),
    // Syscall numbers differ per ABI, so a foreign ABI (int 0x80 on x86_64) would bypass
    // every rule below; no interpreter needs one.
    ret(RET_KILL_PROCESS),
    stmt(LD_W_ABS, OFFSET_NR),
  ];
  if (spec.x32Bit !== null) program.push(jump(JSET_K, spec.x32Bit, 0, 1), ret(errno(EPERM)));

  for (const name of DENIED) {
    // ENOSYS, not EPERM, makes glibc and libuv fall back from clone3 to clone, which we can filter.
    program.push(...onSyscall(nr[name], [ret(errno(name === "clone3" ? ENOSYS : EPERM))]));
  }
  program.push(
    ...onSyscall(nr.socket, argIn(0, [AF_UNIX, AF_INET, AF_INET6], RET_ALLOW, errno(EAFNOSUPPORT))),
    ...onSyscall(nr.clone, [
      stmt(LD_W_ABS, argOffset(0)),
      jump(JSET_K, CLONE_NEW_FLAGS, 0, 1),
      ret(errno(EPERM)),
      ret(RET_ALLOW),
    ]),
    // TIOCSTI pushes input into a terminal another process reads; TIOCLINUX can do the same.
    ...onSyscall(nr.ioctl, argIn(1, [TIOCSTI, TIOCLINUX], errno(EPERM), RET_ALLOW)),
    // Other personalities can disable ASLR (ADDR_NO_RANDOMIZE) or make data executable.
    ...onSyscall(nr.personality, argIn(0, [PERSONALITY_QUERY, PER_LINUX], RET_ALLOW, errno(EPERM))),
    ret(RET_ALLOW),
  );
  assertWellFormed(program);
  return program;
}

/** The kernel rejects a bad program only when bwrap loads it; fail at build time instead. */
function assertWellFormed(program: readonly Insn[]): void {
  if (program.length > BPF_MAXINSNS) {
    throw new Error(`seccomp program has ${program.length} instructions; the kernel allows ${BPF_MAXINSNS}`);
  }
  program.forEach(([code, jt, jf], pc) => {
    if ((code & 0x07) !== 0x05) return; // not BPF_JMP
    for (const offset of [jt, jf]) {
      if (!Number.isInteger(offset) || offset < 0 || offset > 0xff || pc + 1 + offset >= program.length) {
        throw new Error(`seccomp program: jump at ${pc} by ${offset} leaves the program`);
      }
    }
  });
  const last = program[program.length - 1];
  if (last === undefined || last[0] !== RET_K) throw new Error("seccomp program must end with a return");
}

/**
 * The filter as bwrap reads it from `--seccomp FD`: an array of struct sock_filter
 * ({u16 code; u8 jt; u8 jf; u32 k}, 8 bytes each) in the machine's byte order.
 */
export function buildSeccompProgram(arch: NodeJS.Architecture = process.arch): Buffer {
  const spec = ARCHES[arch];
  if (spec === undefined) {
    throw new Error(`no seccomp syscall table for architecture \`${arch}\`; check isSeccompArchSupported() first`);
  }
  const program = buildInstructions(spec);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k, i * 8 + 4);
  });
  return bytes;
}
