# The `sandgate` module of sandboxed Python code: call_mcp_tool(), ToolError, show(), return_image(),
# return_content(), and the functions of sandgate's own operations (search_tools(), list_servers(), ...)
# generated into sandgate_ops.py. A call goes to the host as a frame on fd 4; its reply comes back on fd 3 (docs/runner-protocol.md).

import os
import _thread

import sandgate_frames as _frames

__all__ = ["call_mcp_tool", "callMCPTool", "ToolError", "show", "return_image", "return_content"]


class ToolError(Exception):
    """A tool call that failed: `tool` as called, the host's or upstream server's `message`, and
    `kind` (ToolError, ToolTimeout, ToolLimit, ToolNotFound, ToolDenied, InvalidArguments, ToolCancelled)."""

    def __init__(self, tool, message, kind="ToolError"):
        super().__init__(tool, message, kind)
        self.tool = tool
        self.message = message
        self.kind = kind

    def __str__(self):
        return f"tool `{self.tool}` failed: {self.message}"


class _Channel:
    """Tool calls in flight. From a run's first call until the run ends, fd 3 is watched by the
    event loops the calls run on (add_reader), so replies arrive in any order while user code runs,
    and the bytes read go to the runner's own frame buffer: nothing is lost or read twice between
    calls. Registering once per run, not per call, keeps a call to a few system calls."""

    def __init__(self):
        self.reader = None  # the runner's FrameReader; None outside a runner
        self.run_id = None
        self.counter = 0
        self.pending = {}  # callId -> (future, loop, tool)
        self.watching = {}  # loops watching fd 3 in this run
        self.lock = _thread.allocate_lock()
        self.pid = os.getpid()

    async def call(self, tool, args, op=None):
        """`op` (an operation's id, or "return") makes it a call of sandgate's own; `tool` then only names it in errors."""
        import asyncio

        if not _asyncio_patched:
            _patch_asyncio(asyncio)
        if self.reader is None:
            raise ToolError(tool, "tool calls are only available inside a sandgate sandbox")
        if os.getpid() != self.pid:
            raise ToolError(tool, "tool calls cannot be made from a forked process; make them in the main process")
        loop = asyncio.get_running_loop()
        self.counter += 1
        call_id = f"p{self.counter}"
        if op is None:
            frame = {"type": "tool_call", "id": self.run_id, "callId": call_id, "tool": tool, "args": args}
        else:
            frame = {"type": "call", "id": self.run_id, "callId": call_id, "op": op, "args": args}
        try:
            data = _frames.dumps(frame).encode("ascii")
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError(f"the arguments of tool `{tool}` cannot be sent as JSON: {exc}") from None
        future = loop.create_future()
        with self.lock:
            # Between calls the runner itself reads fd 3 (blocking); nobody else may then.
            if self.run_id is None or self.run_id != frame["id"]:
                raise ToolError(tool, "tool calls can only be made while the code's call runs", "ToolCancelled")
            self.pending[call_id] = (future, loop, tool)
            self._watch(loop)
        try:
            _frames.send_frame_bytes(data)
            return await future
        finally:
            self.pending.pop(call_id, None)

    def _watch(self, loop):
        if loop in self.watching and not loop.is_closed():
            return
        if not self.watching:
            os.set_blocking(_frames.FRAMES_IN, False)
        loop.add_reader(_frames.FRAMES_IN, self._on_readable, loop)
        self.watching[loop] = True

    def _read_frames(self, loop):
        with self.lock:
            if loop not in self.watching:
                return ()  # the call ended and fd 3 is the runner's again
            try:
                chunk = os.read(_frames.FRAMES_IN, 1 << 16)
            except (BlockingIOError, InterruptedError):
                return ()  # another loop (a thread's) took the bytes first
            except OSError as exc:
                _frames.die(f"cannot read frames: {exc}")
            if not chunk:
                _frames.die("the host closed the frame pipe")
            reader = self.reader
            reader.buf += chunk
            try:
                frames = reader.take()
            except _frames.ProtocolError as exc:
                _frames.die(f"malformed frame: {exc}")
        return frames

    def _on_readable(self, loop):
        # A SIGINT (the host interrupting the call) between reading bytes and buffering them would
        # lose part of a frame; it waits until the bytes are in the buffer.
        blocked = _frames.block_sigint()
        try:
            frames = self._read_frames(loop)
        finally:
            _frames.unblock_sigint(blocked)
        for frame in frames:
            if frame["type"] == "tool_result":
                self.dispatch(frame)
            else:
                self.reader.held.append(frame)

    def dispatch(self, frame):
        """Settles the call a tool_result frame answers; a reply nobody waits for is dropped."""
        entry = self.pending.get(frame.get("callId"))
        if entry is None:
            return
        future, loop, tool = entry
        if frame.get("ok") is True:
            _settle_in(loop, future, frame.get("value"), None)
            return
        error = frame.get("error")
        if type(error) is not dict:
            error = {}
        message = error.get("message")
        kind = error.get("type")
        exc = ToolError(tool, message if type(message) is str else "the tool failed", kind if type(kind) is str else "ToolError")
        _settle_in(loop, future, None, exc)

    def end_call(self):
        """The host drops replies once a call has ended (and cancels the tool): calls still waiting
        are cancelled too, rather than left waiting forever. A cancelled task is not logged as an
        error nobody retrieved, so a forgotten task stays quiet."""
        with self.lock:
            self.run_id = None
            pending, self.pending = self.pending, {}
            watching, self.watching = self.watching, {}
            if watching:
                os.set_blocking(_frames.FRAMES_IN, True)
        if not watching and not pending:
            return  # code that made no tool call never pays for importing asyncio
        import asyncio

        for loop in watching:
            try:
                if loop.is_running() and asyncio.events._get_running_loop() is not loop:
                    loop.call_soon_threadsafe(loop.remove_reader, _frames.FRAMES_IN)
                else:
                    loop.remove_reader(_frames.FRAMES_IN)
            except Exception:
                pass
        for future, loop, _ in pending.values():
            _settle_in(loop, future, None, None, cancel=True)


def _settle(future, value, exc, cancel=False):
    if future.done():
        return
    if cancel:
        future.cancel("the code's run ended before the tool replied")
    elif exc is None:
        future.set_result(value)
    else:
        future.set_exception(exc)


def _settle_in(loop, future, value, exc, cancel=False):
    import asyncio

    if asyncio.events._get_running_loop() is loop or not loop.is_running():
        _settle(future, value, exc, cancel)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(_settle, future, value, exc, cancel)


_channel = _Channel()

# Frames of files under these prefixes are sandgate's own, never shown in a traceback: the runner's
# (this module's too) and the generated tool wrappers (`from servers.x import y`), which only pass the call on.
RUNNER_FILES_PREFIX = ("/sandgate/runners/", "/sandgate/tools/")
_asyncio_patched = False


def _hide_runner_paths(text):
    """`text` (a task's or future's repr) without where the runner's coroutines were defined."""
    import re

    return re.sub(r", defined at /sandgate/runners/[^>\s]*", "", text)


def strip_runner_frames(exc):
    """Unlinks this module's frames (and the runner's) from the tracebacks of `exc` and the
    exceptions chained to it: a report nobody formats through the runner (asyncio's handler of
    a loop user code made) then names only the user's file and libraries."""
    seen = set()
    pending = [exc]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        head = None
        last = None
        tb = exc.__traceback__
        while tb is not None:
            following = tb.tb_next
            if not tb.tb_frame.f_code.co_filename.startswith(RUNNER_FILES_PREFIX):
                if last is None:
                    head = tb
                else:
                    last.tb_next = tb
                last = tb
            tb = following
        if last is not None:
            last.tb_next = None
        exc.__traceback__ = head
        pending.append(exc.__cause__)
        pending.append(exc.__context__)
        pending.extend(getattr(exc, "exceptions", ()))


class _Shown:
    """Stands in for an object in a report: its repr without the runner's paths."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _patch_asyncio(asyncio):
    """Loops that user code makes (asyncio.run) report errors nobody retrieved with the default
    handler; it gets the same treatment as the runner's own loop, once a tool call is made."""
    global _asyncio_patched
    _asyncio_patched = True
    base = asyncio.BaseEventLoop
    original = base.default_exception_handler

    def default_exception_handler(self, context):
        try:
            context = dict(context)
            strip_runner_frames(context.get("exception"))
            for key in ("future", "task", "handle"):
                if key in context:
                    context[key] = _Shown(_hide_runner_paths(repr(context[key])))
        except Exception:
            pass
        return original(self, context)

    base.default_exception_handler = default_exception_handler


async def call_mcp_tool(tool, args=None):
    """Calls the host tool `tool` ("server.name") with the JSON object `args` and returns its
    result; raises ToolError when the call fails."""
    if type(tool) is not str:
        raise TypeError(f"call_mcp_tool() needs the tool name as a string like 'github.search_issues', not {type(tool).__name__}")
    if args is None:
        args = {}
    elif not isinstance(args, dict):
        raise TypeError(f"call_mcp_tool() needs args as a dict, not {type(args).__name__}")
    return await _channel.call(tool, args)


# The name JavaScript code and the usual code-execution template use, for code written against either.
callMCPTool = call_mcp_tool


async def _call_operation(op, label, args):
    """Calls sandgate's operation `op` with `args` less those that are None; `label` (its Python name)
    names it in a ToolError. The generated functions of sandgate_ops.py call this."""
    return await _channel.call(label, {key: value for key, value in args.items() if value is not None}, op)


def return_image(content):
    """Passes image content an upstream tool returned to the agent, besides the call's text: an MCP
    image block ({"type": "image", "data": base64, "mimeType": ...}), a list of content blocks or a
    tool result with "content" (its image blocks). The host checks each image as it checks show()."""
    import sandgate_images

    sandgate_images.return_content(content, images_only=True)


def return_content(content):
    """Passes MCP content blocks an upstream tool returned to the agent: images as images (see
    return_image), text (and a resource's text) printed to the call's output, audio and binary
    resources named in a line of output (the agent's result carries images only)."""
    import sandgate_images

    sandgate_images.return_content(content, images_only=False)


def show(obj, mime=None):
    """Returns an image to the agent now, besides the call's text: a matplotlib figure or axes, a PIL
    image, PNG/JPEG/GIF/WebP/SVG bytes or SVG text, a path to an image file, or an MCP image content
    item (or a tool result's content list: every image in it). `mime` overrides the detected type."""
    import sandgate_images

    sandgate_images.show(obj, mime)


# Last: the generated functions import this module back for _call_operation.
from sandgate_ops import *  # noqa: E402,F401,F403
import sandgate_ops as _ops  # noqa: E402

__all__ += _ops.__all__
