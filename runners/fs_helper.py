# sandgate file helper: one workspace operation, run as the sandbox user inside its own bubblewrap
# namespaces, where only /usr (read-only) and the workspace at /workspace exist. The host never
# touches a workspace by path; it asks this helper. Request: one JSON line on stdin (then `size`
# raw bytes for a write). Reply: one JSON line on stdout (then `size` raw bytes for a read).
# `upload` and `download` stream instead (docs/fs-helper-protocol.md), and the helper then leaves.

import json
import os
import resource
import stat
import sys

ROOT = "/workspace"
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# A usage walk holds one fd per level; a deeper tree is counted as over the limit.
MAX_WALK_DEPTH = 800
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refused(Exception):
    """An answer for the host: `kind` plus details; the host words the message."""

    def __init__(self, kind, **details):
        super().__init__(kind)
        self.reply = {"ok": False, "error": kind, **details}


def send(header, body=b""):
    out = sys.stdout.buffer
    header["body"] = len(body)
    out.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
    if body:
        out.write(body)
    out.flush()


def kind_of(mode):
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


def segments_of(request):
    segs = request.get("segments")
    if not isinstance(segs, list) or not all(isinstance(s, str) and s not in ("", ".", "..") and "/" not in s and "\0" not in s for s in segs):
        raise Refused("bad_request")
    return segs


def resolve(segs):
    """How many leading segments exist, and the symlink-free real path of that prefix (inside ROOT)."""
    existing = 0
    path = ROOT
    while existing < len(segs):
        try:
            os.lstat(path + "/" + segs[existing])
        except OSError:
            break
        path += "/" + segs[existing]
        existing += 1
    real = os.path.realpath(path)
    # realpath does not fail on a dangling or looping link: it returns a path that is missing or still a link.
    try:
        st = os.lstat(real)
    except OSError:
        raise Refused("escape")
    if stat.S_ISLNK(st.st_mode) or not (real == ROOT or real.startswith(ROOT + "/")):
        raise Refused("escape")
    return existing, real


def open_dir(real):
    """A directory fd for `real` (symlink-free, under ROOT), reached one component at a time."""
    fd = os.open(ROOT, DIR_FLAGS)
    try:
        for part in real[len(ROOT):].split("/"):
            if part == "":
                continue
            try:
                nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError:
                # A component changed into a link or a file since resolve(): someone is racing us.
                raise Refused("escape")
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


# The walks below (usage_of, delete_tree) open directories through these two: a directory the
# sandbox made unreadable is made usable first, as its owner could, and a link is never followed.
def open_root():
    try:
        os.chmod(ROOT, 0o700)
    except OSError:
        pass
    return os.open(ROOT, DIR_FLAGS)


def open_child(name, mode, dir_fd):
    """The fd of directory `name` in `dir_fd` (whose lstat mode is `mode`)."""
    if mode & 0o700 != 0o700:
        os.chmod(name, 0o700, dir_fd=dir_fd)
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def split_real(real):
    parent, _, name = real.rpartition("/")
    return parent, name


def open_regular(segs):
    """The workspace file at `segs`, opened for reading without following a link, and its stat;
    refused unless it is a regular file. The caller closes the descriptor."""
    existing, real = resolve(segs)
    if existing < len(segs):
        raise Refused("not_found")
    if real == ROOT:
        raise Refused("not_a_file", what="directory")
    parent, name = split_real(real)
    dfd = open_dir(parent)
    try:
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=dfd)
        except OSError as e:
            if e.errno == 6:  # ENXIO: a socket
                raise Refused("not_a_file", what="special")
            if e.errno == 40:  # ELOOP: swapped for a link since resolve()
                raise Refused("escape")
            if e.errno == 2:
                raise Refused("not_found")
            raise
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise Refused("not_a_file", what="directory")
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_a_file", what="special")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read(request):
    segs = segments_of(request)
    limit = int(request["maxBytes"])
    fd, st = open_regular(segs)
    try:
        if st.st_size > limit:
            raise Refused("too_large")
        chunks = []
        length = 0
        while length <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - length))
            if not chunk:
                break
            chunks.append(chunk)
            length += len(chunk)
        if length > limit:
            raise Refused("too_large")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    send({"ok": True, "size": len(data)}, data)


def usage_of(byte_limit, inode_limit):
    """Bytes (file and directory blocks) and inodes below ROOT; stops as soon as either limit is passed."""
    total = 0
    inodes = 0
    # Directories the sandbox made unreadable are counted as their owner would: made usable first
    # (open_root, open_child). What still cannot be walked, or is too deep to walk, counts as over.
    stack = [open_root()]
    pending = [None]
    try:
        while stack:
            fd = stack[-1]
            if pending[-1] is None:
                try:
                    pending[-1] = os.scandir(fd)
                except OSError:
                    return total, inodes, True
            entry = next(pending[-1], None)
            if entry is None:
                closer = getattr(pending[-1], "close", None)
                if closer:
                    closer()
                os.close(stack.pop())
                pending.pop()
                continue
            try:
                st = os.lstat(entry.name, dir_fd=fd)
            except FileNotFoundError:
                continue  # removed while we looked
            except OSError:
                return total, inodes, True
            total += st.st_blocks * 512
            inodes += 1
            if total > byte_limit or inodes > inode_limit:
                return total, inodes, True
            if stat.S_ISDIR(st.st_mode):
                if len(stack) >= MAX_WALK_DEPTH:
                    return total, inodes, True
                try:
                    child = open_child(entry.name, st.st_mode, fd)
                except FileNotFoundError:
                    continue
                except OSError:
                    return total, inodes, True
                stack.append(child)
                pending.append(None)
    finally:
        for it in pending:
            closer = getattr(it, "close", None)
            if closer:
                closer()
        for fd in stack:
            os.close(fd)
    return total, inodes, False


def usage(request):
    total, inodes, over = usage_of(int(request["workspaceBytes"]), int(request["workspaceInodes"]))
    send({"ok": True, "bytes": total, "inodes": inodes, "over": over})


def read_payload(size):
    if size < 0:
        raise Refused("bad_request")
    data = sys.stdin.buffer.read(size)
    if len(data) != size:
        raise Refused("bad_request")
    return data


def write_target(segs):
    """Where a write of `segs` lands: (segments that exist, real parent directory, file name,
    directories to create, bytes of the regular file it replaces). A link or a non-file there is refused."""
    existing, real = resolve(segs)
    replaced = 0
    if existing == len(segs):
        st = os.lstat(ROOT + "/" + "/".join(segs))
        if stat.S_ISLNK(st.st_mode):
            raise Refused("symlink")
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_a_file", what="directory" if stat.S_ISDIR(st.st_mode) else "special")
        replaced = st.st_blocks * 512
        parent, name = split_real(real)
        missing = []
    else:
        if not stat.S_ISDIR(os.lstat(real).st_mode):
            raise Refused("not_dir", existing=existing)
        parent = real
        missing = segs[existing:-1]
        name = segs[-1]
    return existing, parent, name, missing, replaced


def write(request):
    segs = segments_of(request)
    if not segs:
        raise Refused("not_a_file", what="directory")
    data = request["data"]
    byte_limit = int(request["workspaceBytes"])
    inode_limit = int(request["workspaceInodes"])
    existing, parent, name, missing, replaced = write_target(segs)
    new_inodes = 0 if existing == len(segs) else len(missing) + 1
    used, inodes, _ = usage_of(byte_limit + replaced, inode_limit + 1)
    if used - replaced + len(data) > byte_limit:
        raise Refused("quota_bytes")
    if inodes + new_inodes > inode_limit:
        raise Refused("quota_inodes")
    dfd = open_dir(parent)
    made = []  # (parent fd, name, is_dir), deepest last
    fds = [dfd]
    fd = None
    try:
        for segment in missing:
            os.mkdir(segment, 0o755, dir_fd=fds[-1])
            made.append((fds[-1], segment, True))
            nfd = os.open(segment, DIR_FLAGS, dir_fd=fds[-1])
            fds.append(nfd)
            os.fchmod(nfd, 0o755)
        created = existing < len(segs)
        try:
            fd = os.open(name, WRITE_FLAGS, 0o644, dir_fd=fds[-1])
        except OSError as e:
            if e.errno == 40:
                raise Refused("symlink")
            if e.errno in (21, 6):  # EISDIR, ENXIO (a FIFO without a reader, a socket)
                raise Refused("not_a_file", what="special" if e.errno == 6 else "directory")
            raise
        if created:
            made.append((fds[-1], name, False))
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_a_file", what="special")
        if created:
            os.fchmod(fd, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.close(fd)
        fd = None
        send({"ok": True, "created": created})
    except BaseException:
        if fd is not None:
            os.close(fd)
        # Leave nothing half-made: what this call created goes, deepest first.
        for pfd, entry, is_dir in reversed(made):
            try:
                if is_dir:
                    os.rmdir(entry, dir_fd=pfd)
                else:
                    os.unlink(entry, dir_fd=pfd)
            except OSError:
                pass
        raise
    finally:
        for f in fds:
            os.close(f)


FRAME_ABORT = 0xFFFFFFFF
MAX_FRAME = 1 << 20
TEMP_PREFIX = ".sandgate-upload-"


def read_exact(n):
    data = sys.stdin.buffer.read(n)
    if len(data) != n:
        raise Refused("aborted")  # the host went away mid-upload
    return data


def write_all(fd, data):
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError as e:
        if e.errno in (28, 122, 27):  # ENOSPC, EDQUOT, EFBIG: the workspace's own filesystem is full
            raise Refused("workspace_full")
        raise


def upload(request):
    """A streamed write: frames (4-byte big-endian length, then bytes) until a zero length commits.

    The bytes go to an unnamed file (O_TMPFILE) in the target directory, linked and renamed over
    the target only when the whole upload arrived: an abort, a refusal or a killed helper leaves
    nothing behind. Where the filesystem has no O_TMPFILE, a hidden temporary name is removed instead.
    """
    segs = segments_of(request)
    if not segs:
        raise Refused("not_a_file", what="directory")
    byte_limit = int(request["workspaceBytes"])
    inode_limit = int(request["workspaceInodes"])
    max_bytes = int(request["maxBytes"])
    existing, parent, name, missing, replaced = write_target(segs)
    room = None
    if request.get("measure"):
        # A plain directory: nothing but this count stops the upload at the workspace's size.
        used, inodes, _ = usage_of(byte_limit + replaced, inode_limit + 1)
        new_inodes = 0 if existing == len(segs) else len(missing) + 1
        if inodes + new_inodes > inode_limit:
            raise Refused("quota_inodes")
        room = byte_limit - (used - replaced)
        if room < 0:
            raise Refused("quota_bytes")
    dfd = open_dir(parent)
    made = []
    fds = [dfd]
    fd = None
    temp = None
    try:
        for segment in missing:
            os.mkdir(segment, 0o755, dir_fd=fds[-1])
            made.append(segment)
            nfd = os.open(segment, DIR_FLAGS, dir_fd=fds[-1])
            fds.append(nfd)
            os.fchmod(nfd, 0o755)
        try:
            fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o644, dir_fd=fds[-1])
        except OSError as e:
            if e.errno not in (95, 21):  # EOPNOTSUPP, EISDIR: this filesystem has no O_TMPFILE
                raise
            temp = TEMP_PREFIX + os.urandom(8).hex()
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fds[-1])
        os.fchmod(fd, 0o644)
        written = 0
        while True:
            length = int.from_bytes(read_exact(4), "big")
            if length == 0:
                break
            if length == FRAME_ABORT:
                raise Refused("aborted")
            if length > MAX_FRAME:
                raise Refused("bad_request")
            chunk = read_exact(length)
            written += length
            if written > max_bytes:
                raise Refused("too_large")
            if room is not None and written > room:
                raise Refused("quota_bytes")
            write_all(fd, chunk)
        if temp is None:
            temp = TEMP_PREFIX + os.urandom(8).hex()
            os.link("/proc/self/fd/%d" % fd, temp, dst_dir_fd=fds[-1], follow_symlinks=True)
        try:
            os.rename(temp, name, src_dir_fd=fds[-1], dst_dir_fd=fds[-1])
        except OSError as e:
            if e.errno in (21, 39, 20):  # EISDIR, ENOTEMPTY, ENOTDIR: a directory took the name meanwhile
                raise Refused("not_a_file", what="directory")
            raise
        temp = None
        os.close(fd)
        fd = None
        send({"ok": True, "created": existing < len(segs), "size": written})
    except BaseException:
        if fd is not None:
            os.close(fd)
        if temp is not None:
            try:
                os.unlink(temp, dir_fd=fds[-1])
            except OSError:
                pass
        # Directories this upload made go too, deepest first (each only if still empty).
        for depth in range(len(made), 0, -1):
            try:
                os.rmdir(made[depth - 1], dir_fd=fds[depth - 1])
            except OSError:
                pass
        raise
    finally:
        for f in fds:
            os.close(f)


def download(request):
    """Sends a regular file whole, in chunks, without a size limit: the header says how many bytes follow."""
    fd, st = open_regular(segments_of(request))
    try:
        size = st.st_size
        out = sys.stdout.buffer
        out.write(json.dumps({"ok": True, "size": size, "body": size}, separators=(",", ":")).encode() + b"\n")
        remaining = size
        while remaining > 0:
            chunk = os.read(fd, min(MAX_FRAME, remaining))
            if not chunk:
                break  # the file shrank meanwhile: the host sees a short body and fails the transfer
            out.write(chunk)
            remaining -= len(chunk)
        out.flush()
    finally:
        os.close(fd)


def listing(request):
    segs = segments_of(request)
    limit = max(0, int(request["limit"]))
    existing, real = resolve(segs)
    if existing < len(segs):
        raise Refused("not_found")
    if not stat.S_ISDIR(os.lstat(real).st_mode):
        raise Refused("not_a_dir")
    dfd = open_dir(real)
    try:
        names = sorted(os.fsencode(n) for n in os.listdir(dfd))
        entries = []
        for raw in names[:limit]:
            try:
                st = os.lstat(raw, dir_fd=dfd)
            except OSError:
                continue  # removed while we looked
            kind = kind_of(st.st_mode)
            entries.append({"name": raw.hex(), "type": kind, "size": st.st_size if kind == "file" else 0, "mtimeMs": st.st_mtime_ns / 1e6})
    finally:
        os.close(dfd)
    send({"ok": True, "entries": entries, "truncated": len(names) > limit})


def delete_tree(_request):
    """Empties ROOT: iterative, by directory fds (any depth), making unreadable directories usable first."""
    removed = 0
    stack = [open_root()]
    names = [None]
    try:
        while stack:
            fd = stack[-1]
            if names[-1] is None:
                names[-1] = [os.fsencode(n) for n in os.listdir(fd)]
            if not names[-1]:
                os.close(stack.pop())
                names.pop()
                if stack:
                    os.rmdir(names[-1].pop(), dir_fd=stack[-1])
                    removed += 1
                continue
            name = names[-1][-1]
            try:
                st = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                names[-1].pop()
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(open_child(name, st.st_mode, fd))
                names.append(None)
                continue
            os.unlink(name, dir_fd=fd)
            names[-1].pop()
            removed += 1
    finally:
        for fd in stack:
            os.close(fd)
    send({"ok": True, "removed": removed})

SOURCE = "/source"
COPY_CHUNK = 1 << 20


def copy_file(name, src_fd, dst_fd, st):
    """One regular file's bytes, mode and times; a file the sandbox user cannot read is skipped."""
    try:
        rfd = os.open(name, READ_FLAGS, dir_fd=src_fd)
    except PermissionError:
        return False
    try:
        try:
            wfd = os.open(name, WRITE_FLAGS | os.O_EXCL, 0o600, dir_fd=dst_fd)
        except FileExistsError:
            return False
        try:
            # At most the size lstat saw: a file the source's code keeps appending to cannot make the copy endless.
            left = st.st_size
            while left > 0:
                chunk = os.read(rfd, min(COPY_CHUNK, left))
                if not chunk:
                    break
                write_all(wfd, chunk)
                left -= len(chunk)
            os.fchmod(wfd, stat.S_IMODE(st.st_mode))
            os.utime(wfd, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(wfd)
    finally:
        os.close(rfd)
    return True


def copy_from(request):
    """Copies the tree at SOURCE (read-only, another session's workspace) into ROOT, links as links.

    Regular files, directories, symbolic links (never followed) and FIFOs (made, never opened) are
    copied; sockets and anything the sandbox user cannot read are skipped and counted. Stops with
    `over` past the byte or inode limit, `too_deep` past MAX_WALK_DEPTH levels.
    """
    byte_limit = int(request["workspaceBytes"])
    inode_limit = int(request["workspaceInodes"])
    files = dirs = links = fifos = skipped = 0
    total = 0
    stack = [(os.open(SOURCE, DIR_FLAGS), open_root(), None)]
    pending = [None]
    try:
        while stack:
            src_fd, dst_fd, _ = stack[-1]
            if pending[-1] is None:
                pending[-1] = iter(sorted(os.fsencode(n) for n in os.listdir(src_fd)))
            name = next(pending[-1], None)
            if name is None:
                s_fd, d_fd, dir_st = stack.pop()
                pending.pop()
                try:
                    # Its contents are written: a read-only directory gets its mode only now.
                    if dir_st is not None:
                        os.fchmod(d_fd, stat.S_IMODE(dir_st.st_mode))
                        os.utime(d_fd, ns=(dir_st.st_atime_ns, dir_st.st_mtime_ns))
                finally:
                    os.close(d_fd)
                    os.close(s_fd)
                continue
            try:
                st = os.lstat(name, dir_fd=src_fd)
            except FileNotFoundError:
                continue
            mode = st.st_mode
            if stat.S_ISREG(mode):
                total += st.st_size
            if total > byte_limit or files + dirs + links + fifos + 1 > inode_limit:
                raise Refused("over", bytes=total, inodes=files + dirs + links + fifos + 1)
            if stat.S_ISDIR(mode):
                if len(stack) >= MAX_WALK_DEPTH:
                    raise Refused("too_deep")
                try:
                    child_src = os.open(name, DIR_FLAGS, dir_fd=src_fd)
                except PermissionError:
                    skipped += 1
                    continue
                try:
                    os.mkdir(name, 0o700, dir_fd=dst_fd)
                except FileExistsError:
                    os.close(child_src)
                    skipped += 1
                    continue
                stack.append((child_src, os.open(name, DIR_FLAGS, dir_fd=dst_fd), st))
                pending.append(None)
                dirs += 1
            elif stat.S_ISREG(mode):
                if copy_file(name, src_fd, dst_fd, st):
                    files += 1
                else:
                    skipped += 1
            elif stat.S_ISLNK(mode):
                os.symlink(os.readlink(name, dir_fd=src_fd), name, dir_fd=dst_fd)
                links += 1
            elif stat.S_ISFIFO(mode):
                os.mkfifo(name, stat.S_IMODE(mode), dir_fd=dst_fd)
                fifos += 1
            else:
                skipped += 1
    finally:
        for src_fd, dst_fd, _ in stack:
            os.close(src_fd)
            os.close(dst_fd)
    send({"ok": True, "files": files, "directories": dirs, "links": links, "fifos": fifos, "skipped": skipped, "bytes": total})


OPS = {"read": read, "write": write, "list": listing, "usage": usage, "delete": delete_tree, "upload": upload, "download": download, "copy_from": copy_from}
# Streamed operations: the helper does this one and leaves (its stdin is the upload's frames).
ONE_SHOT = ("upload", "download")


def handle(request):
    try:
        OPS[request["op"]](request)
    except Refused as refused:
        send(refused.reply)
    except OSError as e:
        send({"ok": False, "error": "os", "errno": e.errno, "message": os.strerror(e.errno) if e.errno else str(e)})
    except Exception as e:  # a bug or an input nobody foresaw: a reason, never a traceback, and the loop goes on
        send({"ok": False, "error": "failed", "message": type(e).__name__})


def main():
    # Walks keep one fd per directory level; trees deeper than PATH_MAX need more than 1024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    os.umask(0)
    # One request after another until stdin closes (a session keeps one helper for its file calls).
    while True:
        line = sys.stdin.buffer.readline(65536)
        if not line:
            return
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or request.get("op") not in OPS:
                raise ValueError("unknown op")
            # A write's bytes are read before anything can refuse it, so the stream stays in step.
            request["data"] = read_payload(int(request["size"])) if request["op"] == "write" else b""
        except (ValueError, KeyError, TypeError, Refused):
            send({"ok": False, "error": "bad_request"})
            return
        handle(request)
        if request["op"] in ONE_SHOT:
            return


main()
