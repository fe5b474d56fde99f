# The Bash runner: a supervisor that hands `execute` frames to one long-lived bash and reports `$?`.
# Shell state (cwd, variables, functions) lives in that bash; if it exits, the next call gets a fresh one.

import os
import sys

sys.path.insert(0, os.path.dirname(__file__) or ".")
try:
    import sandgate_frames as frames
finally:
    del sys.path[0]

import _signal
import select

BASH = "/usr/bin/bash"
# The fds bash sees: a pipe that wakes it for each call, the file holding the code, a pipe for `$?`.
GO_FD, CODE_FD, STATUS_FD = 60, 61, 62
POLL_MS = 100

# `eval` must sit on line 1: bash numbers the lines of eval'd code from the line of the eval, so
# errors then name the user's own line numbers. The code file is read with `read -d ''`, which bash
# reads in bulk from a regular file (from a pipe it reads one byte per syscall). The braces with
# 2>/dev/null keep the loop's own commands out of an xtrace the user turned on; `set -x` is carried
# over into the next eval instead. `disown -a` forgets the call's background jobs, which cleanup is
# about to kill, so bash does not print "Killed" for them into the next call's output.
BOOTSTRAP = (
    "__sg_x=; while { IFS= builtin read -r -n 1 __sg_go <&60 && IFS= builtin read -r -d '' __sg_code <&61; } 2>/dev/null; "
    'do builtin eval "${__sg_x-}${__sg_code-}" </dev/null 60<&- 61<&- 62>&-; '
    "{ __sg_st=$?; builtin disown -a; case $- in *x*) __sg_x='builtin set -x;'; builtin set +x;; *) __sg_x=;; esac; "
    "builtin printf '%s\\0' \"$__sg_st\" >&62; } 2>/dev/null; done"
)


def _exit_code(wait_status):
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code  # killed by a signal: the shell's 128+N convention


def _anonymous_file():
    """A regular file nobody else can open by name, for the code bash reads."""
    try:
        return os.memfd_create("sandgate-bash-code")
    except (AttributeError, OSError):
        pass
    tmpdir = os.environ.get("TMPDIR") or "/tmp"
    try:
        return os.open(tmpdir, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):
        path = os.path.join(tmpdir, f".sandgate-bash-code-{os.getpid()}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
        return fd


class Shell:
    def __init__(self):
        self.code_fd = _anonymous_file()
        self.pid = None
        self.go = None
        self.status = None

    def start(self):
        go_read, self.go = os.pipe()
        self.status, status_write = os.pipe()
        try:
            self.pid = os.posix_spawn(
                BASH,
                [BASH, "--noprofile", "--norc", "-c", BOOTSTRAP, "main.sh"],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, go_read, GO_FD),
                    (os.POSIX_SPAWN_DUP2, self.code_fd, CODE_FD),
                    (os.POSIX_SPAWN_DUP2, status_write, STATUS_FD),
                ],
                # Python ignores SIGPIPE; `yes | head` in the shell must not see EPIPE instead.
                setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
            )
        finally:
            os.close(go_read)
            os.close(status_write)

    def _forget(self):
        os.close(self.go)
        os.close(self.status)
        self.pid = self.go = self.status = None

    def reap_if_exited(self):
        """The exit code if bash has exited (it is then forgotten), else None."""
        pid, wait_status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return None
        self._forget()
        return _exit_code(wait_status)

    def kill(self):
        if self.pid is not None:
            try:
                os.kill(self.pid, frames.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self._forget()

    def limit_cpu(self, seconds):
        """RLIMIT_CPU of bash at its CPU time so far plus `seconds`; what it starts inherits the limit."""
        import resource

        with open(f"/proc/{self.pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        soft, hard = resource.prlimit(self.pid, resource.RLIMIT_CPU)
        limit = int(-(-(used + seconds) // 1))
        if hard != resource.RLIM_INFINITY and limit > hard:
            limit = hard
        resource.prlimit(self.pid, resource.RLIMIT_CPU, (limit, hard))

    def run(self, code):
        """Runs code in bash: ("status", $?) or, if bash exited, ("exited", its exit code)."""
        data = code.encode("utf-8", "surrogatepass") + b"\0"
        os.ftruncate(self.code_fd, 0)
        written = 0
        while written < len(data):
            written += os.pwrite(self.code_fd, data[written:], written)
        # bash reads through its dup of this fd, so it shares the file offset.
        os.lseek(self.code_fd, 0, os.SEEK_SET)
        try:
            frames.write_all(self.go, b"g")
        except BrokenPipeError:
            return "exited", self._wait_exit()
        return self._wait_status()

    def _wait_status(self):
        poller = select.poll()
        poller.register(self.status, select.POLLIN)
        received = b""
        while True:
            if not poller.poll(POLL_MS):
                # A background subshell can keep the status pipe open after bash exits.
                code = self.reap_if_exited()
                if code is not None:
                    return "exited", code
                continue
            chunk = os.read(self.status, 64)
            if not chunk:
                return "exited", self._wait_exit()
            received += chunk
            if b"\0" in received:
                return "status", int(received[: received.index(b"\0")])

    def _wait_exit(self):
        # Blocking: after `exec prog` the call lasts as long as prog, as it would in a script.
        _, wait_status = os.waitpid(self.pid, 0)
        self._forget()
        return _exit_code(wait_status)


def _run_call(shell, request, marker_fds):
    result = {"type": "result", "id": request.id}
    reset = False
    try:
        if shell.pid is not None and shell.reap_if_exited() is not None:
            reset = True  # bash died between calls, e.g. killed from outside
        if shell.pid is None:
            shell.start()
        if "\0" in request.code:
            outcome = ("status", 2)
            frames.write_all(2, b"sandgate: bash code must not contain NUL bytes\n")
        else:
            if request.cpu_seconds is not None:
                try:
                    shell.limit_cpu(request.cpu_seconds)
                except Exception as exc:  # run anyway: the host still enforces wall time
                    frames.log(f"could not set RLIMIT_CPU: {exc!r}")
            outcome = shell.run(request.code)
        kind, status = outcome
        reset = reset or kind == "exited"
        result.update(ok=status == 0, exitCode=status)
        if status != 0:
            result["error"] = {"type": "ExitStatus", "message": f"command exited with status {status}", "traceback": ""}
    except BaseException as exc:
        frames.log(f"call {request.id!r} failed inside the runner: {exc!r}")
        error = {"type": "RunnerError", "message": f"the Bash runner failed: {exc!r}", "traceback": ""}
        result.update(ok=False, exitCode=1, error=error)
    reset = _clean_up(shell) or reset
    if reset:
        result["resetState"] = True
    frames.write_markers(request.marker, *marker_fds)
    try:
        frames.send_frame(result)
    except OSError as exc:
        frames.die(f"cannot send the result frame: {exc}", 1)


def _clean_up(shell):
    """Kills what the call started and makes sure a shell is ready; True if the shell was replaced."""
    reset = False
    try:
        if shell.pid is not None and not frames.kill_others(exempt={shell.pid}, reap=False):
            # Something outran the one-by-one kills (a fork bomb): take bash down with everything.
            frames.log("processes outlived SIGKILL; restarting bash")
            shell.kill()
            reset = True
        if shell.pid is None:
            if not frames.kill_others():
                frames.log("processes started by the call were still alive after SIGKILL")
            shell.start()
    except BaseException as exc:
        frames.log(f"end-of-call cleanup failed: {exc!r}")
    return reset


def main():
    marker_fds = frames.protect_fds()
    shell = Shell()
    shell.start()
    frames.send_frame({"type": "ready", "language": "bash", "pid": os.getpid()})
    reader = frames.FrameReader()
    while True:
        try:
            frame = reader.read()
            if frame is None:
                break
            request = frames.ExecuteRequest(frame, "main.sh")
        except frames.ProtocolError as exc:
            frames.die(f"malformed frame: {exc}")
        except OSError as exc:
            frames.die(f"cannot read frames: {exc}")
        except KeyboardInterrupt as exc:  # a stray SIGINT while idle is no reason to lose the session
            frames.log(f"interrupted while waiting for a frame: {exc!r}")
            continue
        _run_call(shell, request, marker_fds)
    shell.kill()
    os._exit(0)


if __name__ == "__main__":
    main()
