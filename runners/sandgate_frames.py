# Frame I/O, JSON and end-of-call cleanup shared by the Python and Bash runners.
# Imported at start-up of every sandbox, so it loads only builtin modules and _json.

import _signal
import os
import sys

try:
    import _json

    _encoder_args = (None, _json.encode_basestring_ascii, None, ":", ",", False, False, False)
    _json.make_encoder({}, *_encoder_args)
except (ImportError, AttributeError, TypeError):  # not CPython 3.11-like: pay for the json package
    _json = None

FRAMES_IN = 3
FRAMES_OUT = 4
MAX_FRAME = 64 << 20
# Largest image the host keeps, from the current call's execute frame (sandgate_images names a larger one instead of sending it).
max_image_bytes = None
SIGKILL = 9
# How long end-of-call cleanup waits for killed processes to be gone.
KILL_DEADLINE = 2.0


class ProtocolError(Exception):
    pass


def _reject_default(obj):
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps(obj):
    """JSON text in ASCII (lone surrogates escaped); NaN and Infinity are refused, since JSON.parse rejects them."""
    if _json is None:
        import json

        return json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return "".join(_json.make_encoder({}, _reject_default, *_encoder_args[1:])(obj, 0))


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name):
        raise ValueError(f"{name} is not valid JSON")


_WHITESPACE = " \t\n\r"


def loads(text):
    if _json is None:
        import json

        return json.loads(text, parse_constant=_ScanContext.parse_constant)
    scan = _json.make_scanner(_ScanContext)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"invalid JSON at offset {exc.value}") from None
    except Exception:
        # _json raises its detailed errors only once json.decoder is loaded; load it for the message.
        import json

        return json.loads(text, parse_constant=_ScanContext.parse_constant)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data after JSON at offset {end}")
    return obj


def log(message):
    """Writes a line to the sandbox stderr; never raises, since it reports the runner's own troubles."""
    try:
        write_all(2, f"sandgate runner: {message}\n".encode("utf-8", "backslashreplace"))
    except BaseException:
        pass


def log_raw(text):
    try:
        write_all(2, text.encode("utf-8", "backslashreplace"))
    except BaseException:
        pass


def die(message, status=2):
    log(message)
    os._exit(status)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            # User code may have made a shared pipe non-blocking; ours must block.
            os.set_blocking(fd, True)
            continue
        view = view[written:]


class FrameReader:
    def __init__(self, fd=FRAMES_IN):
        self.fd = fd
        # A bytearray that only grows in place, so a signal interrupting a read loses nothing.
        self.buf = bytearray()
        # Frames the tool channel read while a call ran but that are not tool results.
        self.held = []

    def _fill(self, need):
        """Reads until `need` bytes are buffered; False on end of file."""
        buf = self.buf
        while len(buf) < need:
            chunk = os.read(self.fd, min(max(need - len(buf), 65536), 1 << 20))
            if not chunk:
                return False
            buf += chunk
        return True

    def read(self):
        """The next frame as a dict, or None at a clean end of file; ProtocolError otherwise."""
        if self.held:
            return self.held.pop(0)
        if not self._fill(4):
            if self.buf:
                raise ProtocolError("end of file inside a frame header")
            return None
        size = int.from_bytes(self.buf[:4], "big")
        if size > MAX_FRAME:
            raise ProtocolError(f"frame of {size} bytes exceeds the 64 MiB limit")
        if not self._fill(4 + size):
            raise ProtocolError(f"end of file inside a frame of {size} bytes")
        return self._decode(size)

    def take(self):
        """The frames already complete in the buffer, without reading (the tool channel fills it)."""
        buf = self.buf
        out = []
        while len(buf) >= 4:
            size = int.from_bytes(buf[:4], "big")
            if size > MAX_FRAME:
                raise ProtocolError(f"frame of {size} bytes exceeds the 64 MiB limit")
            if len(buf) < 4 + size:
                break
            out.append(self._decode(size))
        return out

    def _decode(self, size):
        body = self.buf[4 : 4 + size]
        del self.buf[: 4 + size]
        try:
            frame = loads(body.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError is a ValueError
            raise ProtocolError(f"frame is not UTF-8 JSON: {exc}") from None
        if type(frame) is not dict or type(frame.get("type")) is not str:
            raise ProtocolError("frame is not an object with a string `type`")
        return frame


_SIGINT_ONLY = (_signal.SIGINT,)


def block_sigint():
    """Holds back SIGINT (the host interrupting a call) in this thread; returns the mask to restore."""
    return _signal.pthread_sigmask(_signal.SIG_BLOCK, _SIGINT_ONLY)


def unblock_sigint(mask):
    _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)


def send_frame_bytes(data):
    """Writes one whole encoded frame. A SIGINT waits until the frame is written: half a frame
    would leave the pipe unreadable and cost the session."""
    blocked = block_sigint()
    try:
        write_all(FRAMES_OUT, len(data).to_bytes(4, "big") + data)
    finally:
        unblock_sigint(blocked)


def send_frame(obj):
    send_frame_bytes(dumps(obj).encode("ascii"))


class ExecuteRequest:
    __slots__ = ("id", "code", "marker", "filename", "cpu_seconds", "env", "keep_processes", "max_image_bytes")

    def __init__(self, frame, default_filename):
        if frame["type"] != "execute":
            raise ProtocolError(f"unexpected frame type {frame['type']!r}")
        for key in ("id", "code", "marker"):
            if type(frame.get(key)) is not str:
                raise ProtocolError(f"execute frame needs a string `{key}`")
        filename = frame.get("filename")
        if filename is None:
            filename = default_filename
        elif type(filename) is not str or not filename:
            raise ProtocolError("execute frame `filename` must be a non-empty string")
        cpu = frame.get("cpuSeconds")
        if cpu is not None and (type(cpu) not in (int, float) or not cpu > 0):
            raise ProtocolError("execute frame `cpuSeconds` must be a positive number")
        try:
            self.marker = frame["marker"].encode("utf-8")
        except UnicodeEncodeError:
            raise ProtocolError("execute frame `marker` is not valid Unicode") from None
        self.id = frame["id"]
        self.code = frame["code"]
        self.filename = filename
        self.cpu_seconds = cpu
        env = frame.get("env")
        if env is not None and (type(env) is not dict or not all(type(k) is str and type(v) is str and "\0" not in k + v for k, v in env.items())):
            raise ProtocolError("execute frame `env` must be an object of strings")
        self.env = env or {}
        images = frame.get("maxImageBytes")
        self.max_image_bytes = images if type(images) is int and images > 0 else None
        self.keep_processes = frame.get("keepProcesses") is True


def protect_fds():
    """Keeps fds 3 and 4 out of processes user code starts, and keeps private copies of fds 1 and 2
    so that the marker reaches the host even if user code closes or redirects them."""
    # Anything above fd 4 was leaked to us by whatever started the host process; user code
    # must not be able to write to it, so close it before any user code runs.
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > FRAMES_OUT:
            try:
                os.close(fd)
            except OSError:
                pass  # the directory listing's own descriptor
    try:
        os.set_inheritable(FRAMES_IN, False)
        os.set_inheritable(FRAMES_OUT, False)
        return os.dup(1), os.dup(2)
    except OSError as exc:
        die(f"runner started without the expected fds 1-4: {exc}")


def write_markers(marker, out_fd, err_fd):
    for fd in (out_fd, err_fd):
        try:
            write_all(fd, marker)
        except OSError as exc:
            log(f"could not write the end-of-output marker to fd {1 if fd == out_fd else 2}: {exc}")


def _owns_pid_namespace():
    """True inside the sandbox (bubblewrap's init is pid 1 and our parent, or we are pid 1).
    Outside it, killing "every process" would mean the host's, so we only kill our descendants."""
    if os.getpid() == 1:
        return True
    if os.getppid() != 1:
        return False
    try:
        fd = os.open("/proc/1/comm", os.O_RDONLY)
        try:
            return os.read(fd, 64).strip() == b"bwrap"
        finally:
            os.close(fd)
    except OSError:
        return False


OWNS_PID_NAMESPACE = _owns_pid_namespace()


def _read_stat(pid):
    """(state, ppid, start time) of a process, or None if it is gone."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 512)
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name may hold spaces and parentheses; the fields after the last ')' do not.
    fields = data[data.rfind(b")") + 2 :].split(b" ", 20)
    if len(fields) < 20:
        return None
    return fields[0], int(fields[1]), fields[19]


_DEAD_STATES = (b"Z", b"X", b"x")


def _scan_processes(exempt):
    """(live, zombie_children): the pids cleanup must kill (in the sandbox every live process but
    pid 1, us and `exempt`; outside it, our live descendants, those of exempt processes included)
    and our own children that are already zombies."""
    me = os.getpid()
    stats = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me or pid == 1 or (OWNS_PID_NAMESPACE and pid in exempt):
            continue
        stat = _read_stat(pid)
        if stat is not None:
            stats[pid] = stat
    zombies = {pid for pid, (state, ppid, _) in stats.items() if ppid == me and state in _DEAD_STATES}
    if OWNS_PID_NAMESPACE:
        return [pid for pid, (state, _, _) in stats.items() if state not in _DEAD_STATES], zombies
    children = {}
    for pid, (_, ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    live, stack = [], [me]
    while stack:
        for pid in children.get(stack.pop(), ()):
            stack.append(pid)
            if pid not in exempt and stats[pid][0] not in _DEAD_STATES:
                live.append(pid)
    return live, zombies


# Zombie children seen at the previous cleanup. A child killed at the end of a call is reaped at the
# end of the next one, so that its owner (a Popen object, asyncio's child watcher) can collect its
# real status first instead of getting ECHILD and logging "Unknown child process".
_unclaimed_zombies = set()


def _reap_unclaimed(zombies):
    global _unclaimed_zombies
    for pid in zombies & _unclaimed_zombies:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    _unclaimed_zombies = zombies - _unclaimed_zombies


# Processes calls asked to keep (keep_processes), pid -> start time: later calls' cleanup spares
# them and their descendants; they end with the sandbox.
_kept = {}


def keep_survivors():
    """Spares every process user code left running (in the sandbox) from later cleanups."""
    live, _ = _scan_processes(())
    for pid in live:
        stat = _read_stat(pid)
        if stat is not None:
            _kept[pid] = stat[2]


def kept_processes():
    """The kept processes still alive (the same process: pid and start time) and their descendants."""
    if not _kept:
        return set()
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _read_stat(int(name))
            if stat is not None and stat[0] not in _DEAD_STATES:
                stats[int(name)] = stat
    for pid in [pid for pid, start in _kept.items() if pid not in stats or stats[pid][2] != start]:
        del _kept[pid]
    children = {}
    for pid, (_, ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    spared, stack = set(_kept), list(_kept)
    while stack:
        for pid in children.get(stack.pop(), ()):
            if pid not in spared:
                spared.add(pid)
                stack.append(pid)
    return spared


def kill_others(exempt=(), reap=True):
    """SIGKILLs everything user code started and waits until it is dead, so nothing it writes can
    land after the marker. Returns False if processes were still alive at the deadline."""
    import time

    global _unclaimed_zombies
    use_kill_all = OWNS_PID_NAMESPACE and not exempt
    deadline = None
    while True:
        if use_kill_all:
            # One syscall reaches every process in the namespace but init and us, even a fork bomb's
            # newest children; ESRCH means there was nothing at all (not even a zombie), the usual case.
            try:
                os.kill(-1, SIGKILL)
            except ProcessLookupError:
                _unclaimed_zombies = set()
                return True
            live, zombies = _scan_processes(exempt)
        else:
            live, zombies = _scan_processes(exempt)
            for pid in live:
                try:
                    os.kill(pid, SIGKILL)
                except ProcessLookupError:
                    pass
            if live:
                live, zombies = _scan_processes(exempt)
        if not live:
            if reap:
                _reap_unclaimed(zombies)
            return True
        now = time.monotonic()
        if deadline is None:
            deadline = now + KILL_DEADLINE
        elif now > deadline:
            return False
        time.sleep(0.0005)


def flush_std_streams():
    for stream in {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}.values():
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # a closed or replaced stream must not break the call's ending
            pass
