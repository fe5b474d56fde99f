# The Python runner: runs `execute` frames in one persistent __main__ namespace (docs/runner-protocol.md).
# A runner starts for every stateless call, so start-up loads builtin modules only; the rest loads on first use.

import os
import sys

sys.path.insert(0, os.path.dirname(__file__) or ".")
try:
    import sandgate_frames as frames
    import sandgate  # stays in sys.modules: user code and generated wrappers import it from there
    import sandgate_packages
finally:
    del sys.path[0]

import _ast
import builtins
import io

PyCF_ONLY_AST = 0x400
PyCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000
CO_COROUTINE = 0x80
CodeType = type(compile("", "", "exec"))


async def _coroutine_probe():
    pass


_probe = _coroutine_probe()
CoroutineType = type(_probe)
FunctionType = type(_coroutine_probe)
_probe.close()
del _probe

VALUE_LIMIT = 64 * 1024
TEXT_LIMIT = 256 * 1024
# A JSON value with more nodes than this is over VALUE_LIMIT anyway (each node takes 2+ bytes).
VALUE_NODE_LIMIT = 40_000
VALUE_DEPTH_LIMIT = 100
SAFE_INTEGER = 2**53 - 1  # beyond it JSON.parse on the host rounds; such ints go as repr
# Functions from earlier calls whose source we keep for tracebacks.
REMEMBERED_CODE_LIMIT = 20_000
# Generated tool wrappers (`from servers.github import search_issues`), when the host mounts them.
TOOLS_DIR = "/sandgate/tools"
TOOLS_PYTHON = "/sandgate/tools/python"
# Replaced (by rename) on every change of an upstream server's tool list.
TOOLS_MANIFEST = "/sandgate/tools/manifest.json"
# The admin's package set (src/sandbox/package-sets.ts): a venv's site-packages, linked at its top.
PACKAGES_SITE = "/sandgate/packages/python/site-packages"


def _clip(text, limit=TEXT_LIMIT):
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters omitted] ...\n{text[-half:]}"


def _safe_str(exc):
    try:
        return _clip(str(exc))
    except BaseException:
        return f"<{type(exc).__name__} str() failed>"


def _safe_repr(value):
    try:
        text = repr(value)
    except BaseException as exc:
        return f"<repr() failed: {type(exc).__name__}: {_safe_str(exc)}>"
    return _clip_value(text)


def _clip_value(text):
    if len(text) > VALUE_LIMIT:
        text = f"{text[:VALUE_LIMIT]}... [{len(text) - VALUE_LIMIT} more characters]"
    return text


def _is_plain_json(value):
    """True when the host's JSON.parse gives back this value (a tuple as a list): no subclasses,
    non-string keys, non-finite floats or ints beyond 2**53 that json.dumps would quietly change."""
    stack = [(value, 0)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > VALUE_NODE_LIMIT or depth > VALUE_DEPTH_LIMIT:
            return False
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -SAFE_INTEGER <= item <= SAFE_INTEGER:
                continue
            return False
        if kind is float:
            if item - item == 0.0:  # NaN and infinities give NaN
                continue
            return False
        if kind is list or kind is dict or kind is tuple:
            if nodes + len(item) > VALUE_NODE_LIMIT:
                return False
            if kind is not dict:
                stack.extend((child, depth + 1) for child in item)
                continue
            for key, child in item.items():
                if type(key) is not str:
                    return False
                stack.append((child, depth + 1))
            continue
        return False
    return True


def _value_fields(value):
    if value is None:
        return {}
    if _is_plain_json(value):
        try:
            if len(frames.dumps(value)) <= VALUE_LIMIT:
                return {"value": value, "valueKind": "json"}
        except (TypeError, ValueError, RecursionError):
            pass
    table = _table_text(value)
    if table is not None:
        return {"value": _clip_value(table), "valueKind": "repr"}
    return {"value": _safe_repr(value), "valueKind": "repr"}


def _table_text(value):
    """A DataFrame or Series as a bounded text table (sandgate_notebook), once pandas is loaded."""
    if "pandas" not in sys.modules:
        return None
    try:
        import sandgate_notebook

        return sandgate_notebook.table_text(value)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return None  # its repr then


def _exit_status(code):
    """Exit status and message of a SystemExit, as the interpreter would exit with it."""
    if code is None:
        return 0, "None"
    if isinstance(code, int):
        return int(code), str(int(code))
    return 1, _safe_str(code)


def _limit_cpu(seconds):
    import resource

    used = sum(os.times()[:2])
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    limit = int(-(-(used + seconds) // 1))
    if hard != resource.RLIM_INFINITY and limit > hard:
        limit = hard
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))


class _Quitter:
    """exit() and quit() for code written as a script; `site`, which normally adds them, is off."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Use {self.name}() to exit"

    def __call__(self, code=None):
        raise SystemExit(code)


def display(*objs, **options):
    """Shows each object now, as a notebook does: figures and images as images, DataFrames and
    Series as tables, anything else as text. Options of IPython's display() are accepted and ignored."""
    import sandgate_notebook

    sandgate_notebook.display(objs, options)


class _SourceLoader:
    """__loader__ of the user's __main__: lets linecache (inspect.getsource, warnings) find the
    current call's source even when linecache is first imported during the call."""

    def __init__(self, session):
        self.session = session

    def get_source(self, name):
        return "".join(self.session.lines)


class _ToolModules:
    """Keeps `servers` and `servers.*` current: when the tool manifest changed since the last call, the
    modules are dropped from sys.modules (the next import reads the new files), and names the user bound
    to them (`from servers import github`, `from servers.github import search_issues`) are bound again
    to the new objects. A name whose tool or server went away keeps its old object; calling it fails
    with the host's error naming the missing tool."""

    key = None

    @classmethod
    def refresh(cls, user_globals):
        try:
            st = os.stat(TOOLS_MANIFEST)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        if key == cls.key:
            return
        first = cls.key is None and key is not None and not any(n == "servers" or n.startswith("servers.") for n in sys.modules)
        cls.key = key
        if first:
            return
        old = {name: module for name, module in list(sys.modules.items()) if name == "servers" or name.startswith("servers.")}
        for name in old:
            del sys.modules[name]
        sys.path_importer_cache.pop(TOOLS_PYTHON, None)
        import importlib

        importlib.invalidate_caches()
        cls._rebind(user_globals, old, importlib)

    @staticmethod
    def _rebind(user_globals, old, importlib):
        """Binds user names that held the old modules or their functions to the new ones, where they still exist."""
        if not old:
            return
        ids = {id(module): name for name, module in old.items()}
        fresh = {}

        def module(name):
            if name not in fresh:
                try:
                    fresh[name] = importlib.import_module(name)
                except Exception:
                    fresh[name] = None
            return fresh[name]

        for key, value in list(user_globals.items()):
            if id(value) in ids:
                new = module(ids[id(value)])
            elif (type(value) is FunctionType or issubclass(type(value), type)) and type(value.__module__) is str and value.__module__ in old:
                new = module(value.__module__)
                new = getattr(new, value.__name__, None) if new is not None else None
            else:
                continue
            if new is not None:
                user_globals[key] = new


class Session:
    def __init__(self):
        self.runner_module = sys.modules["__main__"]
        # User code gets its own __main__ module, so pickle and `import __main__` find its names.
        module = type(sys)("__main__")
        module.__dict__["__builtins__"] = builtins
        module.__dict__["__loader__"] = _SourceLoader(self)
        module.__dict__["call_mcp_tool"] = sandgate.call_mcp_tool
        module.__dict__["callMCPTool"] = sandgate.call_mcp_tool
        module.__dict__["ToolError"] = sandgate.ToolError
        for name in (*sandgate._ops.__all__, "return_image", "return_content"):
            module.__dict__[name] = getattr(sandgate, name)
        module.__dict__["display"] = display
        sys.modules["__main__"] = module
        self.globals = module.__dict__
        # threading takes its default excepthook from _thread when user code first imports it.
        import _thread

        _thread._excepthook = self._thread_excepthook
        self.loop = None
        self.filename = "main.py"
        self.lines = []
        self.tops = []
        self.last_line = None
        # Code of functions defined in earlier calls -> source lines of the call that defined them;
        # every call is "main.py", so linecache alone would show the latest call's lines.
        self.code_lines = {}

    def execute(self, request):
        """Result fields of one call: ok, exitCode and value or error."""
        self.filename = request.filename
        # Split as the compiler counts lines (str.splitlines also breaks at \f, \x1c, \u2028...).
        self.lines = io.StringIO(request.code, newline=None).readlines()
        self.tops = []
        self._register_linecache(sys.modules.get("linecache"))
        # The wrappers may have been generated after an import of them failed; look again.
        if sys.path_importer_cache.get(TOOLS_PYTHON, 0) is None:
            del sys.path_importer_cache[TOOLS_PYTHON]
        _ToolModules.refresh(self.globals)
        self.last_line = None
        _Interrupts.came = False
        try:
            _Interrupts.armed = True
            try:
                value = self._run(request.code, request.filename)
            finally:
                _Interrupts.armed = False
        except BaseException as exc:
            # The error's __str__ is user code too: interrupted like it (see _error_fields).
            return _Interrupts.interruptible(self._error_fields, exc)
        fields = {"ok": True, "exitCode": 0}
        # A __repr__ that never ends is interrupted like the code (its value then says repr() failed).
        try:
            fields.update(_Interrupts.interruptible(_shown_value_fields, value))
        except KeyboardInterrupt as exc:
            return self._error_fields(exc)
        if type(value) is CoroutineType:
            # Dropped by the runner, Python would warn with the runner's file and line.
            frames.flush_std_streams()
            name = getattr(value, "__qualname__", "coroutine")
            frames.log_raw(f"{self.filename}:{self.last_line or 1}: RuntimeWarning: coroutine '{name}' was never awaited (put `await` before the call)\n")
            value.close()
        return fields

    def _thread_excepthook(self, args):
        """threading's default hook: errors in threads print with the frames a call's error shows."""
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        frames.flush_std_streams()
        frames.log_raw(f"Exception in thread {name}:\n{self._format(args.exc_value)}")

    def _loop_exception(self, loop, context):
        """asyncio's handler for errors nobody retrieved, with the call's traceback format."""
        text = f"{context.get('message') or 'Unhandled exception in the event loop'}\n"
        for key in ("future", "task", "handle"):
            if key in context:
                # A task's repr names where its coroutine was defined; call_mcp_tool is the runner's.
                text += sandgate._hide_runner_paths(f"{key}: {_safe_repr(context[key])}\n")
        exc = context.get("exception")
        if exc is not None:
            text += self._format(exc)
        frames.flush_std_streams()
        frames.log_raw(text)

    def _run(self, code, filename):
        code = self._without_magics(code)
        tree = compile(code, filename, "exec", PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT, True)
        body = tree.body
        last = body.pop() if body and type(body[-1]) is _ast.Expr else None
        tops = self.tops
        if body:
            tops.append(compile(tree, filename, "exec", PyCF_ALLOW_TOP_LEVEL_AWAIT, True))
        if last is not None:
            self.last_line = last.lineno
            expression = _ast.Expression(last.value)
            tops.append(compile(expression, filename, "eval", PyCF_ALLOW_TOP_LEVEL_AWAIT, True))
        self._remember_functions(tops)
        if any(top.co_flags & CO_COROUTINE for top in tops):
            # The whole call runs on the loop once any part awaits, so `create_task` works on every line.
            return self._await(self._run_async(tops))
        value = None
        for top in tops:
            value = eval(top, self.globals)
        return value

    def _without_magics(self, code):
        """`!cmd`, `x = !cmd` and `%magic` lines made calls, as IPython does (sandgate_notebook);
        tracebacks still show the lines as written, since self.lines keeps them."""
        if "!" not in code and "%" not in code:
            return code
        import sandgate_notebook

        if not sandgate_notebook.has_magic_lines(self.lines):
            return code
        transformed = sandgate_notebook.transform(self.lines)
        if transformed is None:
            return code
        sandgate_notebook.install()
        return transformed

    async def _run_async(self, tops):
        value = None
        for top in tops:
            value = eval(top, self.globals)
            if top.co_flags & CO_COROUTINE:
                value = await value
        return value

    def _await(self, coroutine):
        # One loop for the runner's lifetime: tasks a call leaves pending go on in the next call that awaits.
        loop = self.loop
        if loop is None or loop.is_closed():
            import asyncio

            loop = self.loop = asyncio.new_event_loop()
            loop.set_exception_handler(self._loop_exception)
        task = loop.create_task(coroutine)
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved here, so asyncio does not log it again at garbage collection
            raise

    def _remember_functions(self, tops):
        remembered = self.code_lines
        pending = list(tops)
        while pending:
            for const in pending.pop().co_consts:
                if type(const) is CodeType:
                    remembered.pop(const, None)
                    remembered[const] = self.lines
                    pending.append(const)
        while len(remembered) > REMEMBERED_CODE_LIMIT:
            del remembered[next(iter(remembered))]

    def _register_linecache(self, linecache):
        # Only when something already loaded linecache (warnings, inspect): importing it costs ~5 ms.
        if linecache is not None:
            try:
                linecache.cache[self.filename] = (1, None, self.lines, self.filename)
            except Exception:
                pass

    def _error_fields(self, exc):
        if isinstance(exc, SystemExit):
            status, message = _exit_status(exc.code)
            if status == 0:
                return {"ok": True, "exitCode": 0}
            error = {"type": "SystemExit", "message": message, "traceback": ""}
            return {"ok": False, "exitCode": status, "error": error}
        exc.__traceback__ = self._user_frames(exc.__traceback__)
        _add_package_hint(exc)
        network = _add_network_hint(exc)
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        came_before = _Interrupts.came
        message = _safe_str(exc)
        if network:
            message = f"{message}\n{NO_NETWORK}"  # as the traceback ends: the exception's line, then its note
        # A str() the call's interrupt stopped would not stop a second time: no traceback then.
        formatted = f"{type(exc).__name__}: {message}\n" if _Interrupts.came and not came_before else self._format(exc)
        error = {"type": type(exc).__name__, "message": message, "traceback": formatted}
        return {"ok": False, "exitCode": 1, "error": error}

    def _user_frames(self, tb):
        """The traceback from the user's top-level code on; None if the error came before it ran."""
        while tb is not None:
            code = tb.tb_frame.f_code
            if any(code is top for top in self.tops):
                return tb
            tb = tb.tb_next
        return None

    def _format(self, exc):
        try:
            import traceback

            if isinstance(exc, SyntaxError) and exc.text is None and exc.filename == self.filename:
                # Errors found while compiling the split AST carry no source text.
                lineno = exc.lineno or 0
                if 0 < lineno <= len(self.lines):
                    exc.text = self.lines[lineno - 1]
            self._register_linecache(sys.modules.get("linecache"))
            report = traceback.TracebackException(type(exc), exc, exc.__traceback__, lookup_lines=False)
            self._attach_source(report, exc, traceback.walk_tb)
            return _clip("".join(report.format()))
        except BaseException as err:
            return f"{type(exc).__name__}: {_safe_str(exc)}\n(traceback unavailable: {type(err).__name__})\n"

    def _attach_source(self, report, exc, walk_tb):
        seen = set()
        pending = [(report, exc)]
        while pending:
            report, exc = pending.pop()
            if report is None or exc is None or id(report) in seen:
                continue
            seen.add(id(report))
            for summary, (frame, _) in zip(report.stack, walk_tb(exc.__traceback__)):
                lines = self._source_of(frame.f_code)
                if lines is None and summary.filename == self.filename:
                    lines = ()  # a function from a forgotten call: no line beats a wrong one
                if lines is not None and summary.name == frame.f_code.co_name:
                    lineno = summary.lineno or 0
                    summary._line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
            # After the source lines are attached (that walk pairs summaries with frames by position).
            report.stack[:] = [summary for summary in report.stack if not summary.filename.startswith(sandgate.RUNNER_FILES_PREFIX)]
            pending.append((report.__cause__, exc.__cause__))
            pending.append((report.__context__, exc.__context__))
            if getattr(report, "exceptions", None) and isinstance(exc, BaseExceptionGroup):
                pending.extend(zip(report.exceptions, exc.exceptions))

    def _source_of(self, code):
        if any(code is top for top in self.tops):
            return self.lines
        try:
            return self.code_lines.get(code)
        except Exception:
            return None


def _add_package_hint(exc):
    """A module that is not installed: say how to get it (message and traceback both read exc.msg)."""
    name = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or not isinstance(name, str) or not name:
        return
    top = name.partition(".")[0]
    if top != name and top in sys.modules:
        return  # a missing submodule of an installed package: no package to ask for
    try:
        exc.msg = f"{exc.msg}; {sandgate_packages.advice('python', top)}"
    except Exception:
        pass


# Said after an error that came from reaching past loopback (sandgate_packages says it for packages).
NO_NETWORK = "no network in this sandbox: only loopback (127.0.0.1) is reachable; work on files in /workspace (uploaded, or written with file_write) or call the configured MCP servers' tools"
# errno of a failed name lookup (socket.gaierror: EAI_NONAME, EAI_AGAIN, EAI_FAIL, EAI_NODATA) or of no route.
NETWORK_ERRNOS = {-2, -3, -4, -5, 101, 113}
# Whose exceptions' text is read for those failures (see _says_network_failure).
NETWORK_LIBRARIES = {"urllib3", "requests", "httpx", "httpcore", "aiohttp"}
# How urllib3, requests, httpx and aiohttp word the same failures in their own exceptions' text.
NETWORK_PHRASES = ("Temporary failure in name resolution", "Name or service not known", "Network is unreachable", "No route to host", "[Errno -3]", "[Errno -2]")


def _add_network_hint(exc):
    """An error from reaching the network (a name lookup, an unreachable host, in the exception or
    what it wraps): says there is none, as a note the traceback shows. True when it did."""
    try:
        if not _from_network(exc):
            return False
        exc.add_note(NO_NETWORK)
        return True
    except Exception:  # an exception type that refuses notes, a `reason` property that raises
        return False


def _says_network_failure(exc):
    """The text of an HTTP library's own exception names a network failure. Only theirs is read: a
    str() of the code's own exception is user code that may never return."""
    if not _from_library(exc):
        return False
    try:
        text = str(exc)[:4096]
    except Exception:
        return False
    return any(phrase in text for phrase in NETWORK_PHRASES)


def _from_library(exc):
    module = type(exc).__module__
    return type(module) is str and module.partition(".")[0] in NETWORK_LIBRARIES


def _from_network(exc):
    if _Interrupts.came:
        return False  # the call's time is up
    pending, seen = [exc], set()
    while pending and len(seen) < 32:
        item = pending.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, OSError) and OSError.errno.__get__(item) in NETWORK_ERRNOS or _says_network_failure(item):
            return True
        # Read as stored, never through a property of the code's own class (user code that may not return).
        args = BaseException.args.__get__(item)
        reason = getattr(item, "reason", None) if _from_library(item) or type(item).__module__ == "urllib.error" else None
        pending.extend((BaseException.__cause__.__get__(item), BaseException.__context__.__get__(item), reason, *args[:4]))
    return False


# Runner modules loaded on first use (images, the matplotlib backend): found here without
# /sandgate/runners on sys.path, so user code's own module names never resolve to ours.
RUNNER_DIR = os.path.dirname(__file__) or "."
LAZY_RUNNER_MODULES = ("sandgate_images", "sandgate_mpl", "sandgate_notebook")


class _RunnerModules:
    """A meta path finder: the lazy runner modules, and pyplot set to draw headless with sandgate_mpl
    (plt.show() returns figures as images) unless the user chose a backend."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "matplotlib.pyplot":
            _use_sandgate_backend()
            return None
        if name in IPYTHON_MODULES:
            return _ipython_stand_in(name)
        if name not in LAZY_RUNNER_MODULES:
            return None
        import importlib.util

        for suffix in (".pyc", ".py"):
            file = os.path.join(RUNNER_DIR, name + suffix)
            if os.path.exists(file):
                return importlib.util.spec_from_file_location(name, file)
        return None


# Served by sandgate_ipython when IPython itself is not installed (`from IPython.display import display`).
IPYTHON_MODULES = ("IPython", "IPython.display")


def _ipython_stand_in(name):
    import importlib.machinery
    import importlib.util

    if name == "IPython" and importlib.machinery.PathFinder.find_spec(name) is not None:
        return None  # the real one
    if name == "IPython.display" and getattr(sys.modules.get("IPython"), "__file__", "") != _runner_file("sandgate_ipython"):
        return None
    file = _runner_file("sandgate_ipython")
    return importlib.util.spec_from_file_location(name, file, submodule_search_locations=[] if name == "IPython" else None) if file else None


def _runner_file(module):
    for suffix in (".pyc", ".py"):
        file = os.path.join(RUNNER_DIR, module + suffix)
        if os.path.exists(file):
            return file
    return None


# GUI backends, which cannot show anything in a sandbox; Debian's /etc/matplotlibrc names TkAgg.
GUI_BACKENDS = {"tkagg", "tkcairo", "qtagg", "qtcairo", "qt5agg", "qt5cairo", "gtk3agg", "gtk3cairo", "gtk4agg", "gtk4cairo", "wx", "wxagg", "wxcairo", "macosx"}


def _use_sandgate_backend():
    """The user's choice of backend stands (MPLBACKEND, matplotlib.use, a non-GUI one in a
    matplotlibrc); otherwise, and instead of a GUI backend from a matplotlibrc, ours is used."""
    mpl = sys.modules.get("matplotlib")
    try:
        params = mpl.rcParams
        current = dict.__getitem__(params, "backend")
        if current is not mpl.rcsetup._auto_backend_sentinel:
            from_rc_file = current == dict.__getitem__(mpl.rcParamsOrig, "backend") and "MPLBACKEND" not in os.environ
            if not (from_rc_file and str(current).lower() in GUI_BACKENDS):
                return
        params["backend"] = "module://sandgate_mpl"
    except Exception:  # an unusual matplotlib: it picks its own (headless) backend
        pass


def _shown_value_fields(value):
    return _value_fields(_image_value(value))


def _image_value(value):
    """A last-expression value that is an image (PIL image, figure, PNG/JPEG/SVG bytes or text, an
    MCP image item) goes to the host as an image, and a short text stands for it in `value`."""
    kind = type(value)
    if value is None or kind is int or kind is float or kind is bool or kind is list or kind is tuple:
        return value
    if kind is str and "<svg" not in value[:4096]:
        return value
    if kind is dict and value.get("type") != "image":
        return value
    if _Interrupts.came:
        return value  # the call's time is up: no image is drawn now
    try:
        import sandgate_images

        shown = sandgate_images.value_image(value)
    except KeyboardInterrupt:
        return value  # the call's time is up: it ends as interrupted
    except Exception as exc:
        frames.flush_std_streams()
        frames.log_raw(f"sandgate: the value could not be returned as an image: {type(exc).__name__}: {_safe_str(exc)}\n")
        return value
    return value if shown is None else shown


def _send_open_figures():
    """Figures user code left open (pyplot loaded) are returned as images and closed."""
    if "matplotlib._pylab_helpers" not in sys.modules:
        return
    try:
        if _Interrupts.came:
            raise KeyboardInterrupt
        import sandgate_images

        _Interrupts.interruptible(sandgate_images.flush_figures)
    except KeyboardInterrupt:
        # The call's time is up: the figures not drawn yet are dropped, not shown by the next call.
        try:
            plt = sys.modules.get("matplotlib.pyplot")
            if plt is not None:
                plt.close("all")
        except BaseException as exc:
            _report_internal_error("closing open figures failed", exc)
    except Exception as exc:
        _report_internal_error("returning open figures failed", exc)


class _Interrupts:
    """SIGINT from the host (a timeout or cancel, docs/runner-protocol.md): KeyboardInterrupt in
    user code, so the call ends and the session's state stays; ignored in the runner's own code."""

    armed = False
    # The call's SIGINT came (the host sends one): the runner's work on its images that follows stops at once.
    came = False

    @staticmethod
    def handler(signum, frame):
        _Interrupts.came = True
        if _Interrupts.armed:
            raise KeyboardInterrupt

    @staticmethod
    def interruptible(work, *args):
        """Runs the runner's work on the call's objects (its value's repr, drawing figures, encoding
        an image), which runs user code and can take as long: the call's interrupt stops it too."""
        before = _Interrupts.armed
        _Interrupts.armed = True
        try:
            return work(*args)
        finally:
            _Interrupts.armed = before


def _setup_interpreter():
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    sys.path.insert(0, "/workspace")
    # The admin's package set (a venv with system site packages): before the system's, as in the venv.
    if os.path.isdir(PACKAGES_SITE):
        sys.path.append(PACKAGES_SITE)
    # What Debian's site module would add; `-S` keeps site (and its .pth processing) out of start-up.
    for path in (f"/usr/local/lib/{version}/dist-packages", "/usr/lib/python3/dist-packages", f"/usr/lib/{version}/dist-packages"):
        if path not in sys.path and os.path.isdir(path):
            sys.path.append(path)
    if os.path.isdir(TOOLS_DIR):
        sys.path.append(TOOLS_PYTHON)
    sys.argv = ["main.py"]
    builtins.exit = _Quitter("exit")
    builtins.quit = _Quitter("quit")
    import _signal  # the builtin module: `signal` would import enum at start-up

    _signal.signal(_signal.SIGINT, _Interrupts.handler)
    sys.meta_path.insert(0, _RunnerModules)
    # Output must reach the host while code runs, not when the call ends.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)


def _set_env(env):
    """Sets the call's environment variables; returns what each was (None: unset) for _restore_env."""
    saved = {}
    for name, value in env.items():
        try:
            previous = os.environ.get(name)
            os.environ[name] = value
            saved[name] = previous
        except Exception as exc:  # the host checks names and values; never lose the call over one
            _report_internal_error(f"could not set environment variable {name}", exc)
    return saved


def _restore_env(saved):
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _run_call(session, request, marker_fds):
    result = {"type": "result", "id": request.id}
    tools = sandgate._channel
    tools.run_id = request.id
    saved_env = _set_env(request.env)
    try:
        if request.cpu_seconds is not None:
            try:
                _limit_cpu(request.cpu_seconds)
            except Exception as exc:  # run anyway: the host still enforces wall time
                _report_internal_error("could not set RLIMIT_CPU", exc)
        frames.max_image_bytes = request.max_image_bytes
        result.update(session.execute(request))
        if os.getpid() == RUNNER_PID:
            _send_open_figures()
    except BaseException as exc:
        _report_internal_error(f"call {request.id!r} failed inside the runner", exc)
        error = {"type": "RunnerError", "message": f"the Python runner failed: {_safe_str(exc)}", "traceback": ""}
        result.update(ok=False, exitCode=1, error=error)
        result.pop("value", None)
        result.pop("valueKind", None)
    try:
        _restore_env(saved_env)
    except BaseException as exc:
        _report_internal_error("restoring the environment failed", exc)
    if os.getpid() != RUNNER_PID:
        _exit_forked_child(result)
    try:
        tools.end_call()
    except BaseException as exc:
        _report_internal_error("ending the call's tool calls failed", exc)
    _end_call(request.marker, marker_fds, result, request.keep_processes)


def _exit_forked_child(result):
    """User code forked and the child ran off the end of the call: it ends like a script's child
    would, instead of going on to act as a second runner (whose cleanup would kill the first)."""
    error = result.get("error")
    if error and error["type"] != "SystemExit":
        frames.log_raw(error["traceback"] or f"{error['type']}: {error['message']}\n")
    frames.flush_std_streams()
    os._exit(result["exitCode"] & 0xFF)


def _end_call(marker, marker_fds, result, keep_processes=False):
    try:
        frames.flush_std_streams()
        if keep_processes:
            frames.keep_survivors()
        elif not frames.kill_others(frames.kept_processes()):
            frames.log("processes started by the call were still alive after SIGKILL")
    except BaseException as exc:
        _report_internal_error("end-of-call cleanup failed", exc)
    frames.write_markers(marker, *marker_fds)
    try:
        frames.send_frame(result)
    except OSError as exc:
        frames.die(f"cannot send the result frame: {exc}", 1)
    except BaseException as exc:
        _report_internal_error("result frame could not be encoded", exc)
        error = {"type": "RunnerError", "message": "the runner could not encode the result", "traceback": ""}
        frames.send_frame({"type": "result", "id": result["id"], "ok": False, "exitCode": 1, "error": error})


def _report_internal_error(what, exc):
    try:
        import traceback

        details = "".join(traceback.format_exception(exc))
    except BaseException:
        details = repr(exc)
    frames.log(f"{what}: {details}")


RUNNER_PID = os.getpid()


def main():
    marker_fds = frames.protect_fds()
    _setup_interpreter()
    session = Session()
    frames.send_frame({"type": "ready", "language": "python", "pid": os.getpid()})
    reader = frames.FrameReader()
    sandgate._channel.reader = reader
    while True:
        try:
            frame = reader.read()
            if frame is None:
                break
            if frame["type"] == "tool_result":
                # A reply that crossed the end of its call, or one for a thread user code left running.
                sandgate._channel.dispatch(frame)
                continue
            request = frames.ExecuteRequest(frame, "main.py")
        except frames.ProtocolError as exc:
            frames.die(f"malformed frame: {exc}")
        except OSError as exc:
            frames.die(f"cannot read frames: {exc}")
        except KeyboardInterrupt as exc:  # a stray SIGINT while idle is no reason to lose the session
            _report_internal_error("interrupted while waiting for a frame", exc)
            continue
        _run_call(session, request, marker_fds)
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException as exc:
        _report_internal_error("atexit handlers failed", exc)
    frames.flush_std_streams()
    # os._exit: threads user code left running must not hold the sandbox open.
    os._exit(0)


if __name__ == "__main__":
    main()
