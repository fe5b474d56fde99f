# Notebook habits in sandboxed Python: display(), `!cmd`, `x = !cmd` and the common line magics
# (%timeit, %time, %pip, %cd, %pwd, %ls, %env, %who, %matplotlib), and tables as text. Loaded on first use.

import builtins
import os
import re
import sys

import sandgate_frames as frames

# Rows and columns of a DataFrame or Series shown as a value or by display(): head and tail beyond.
TABLE_MAX_ROWS = 60
TABLE_MIN_ROWS = 20
TABLE_MAX_COLUMNS = 40
TABLE_MAX_COLWIDTH = 60
# What the user's lines call; a dunder name in builtins, so it works inside functions and classes too.
MAGIC_NAME = "__sandgate_magic__"
# `target = !cmd` or `target = %magic args`: names, attributes and tuples of them as targets.
ASSIGNED_MAGIC = re.compile(r"([ \t]*)([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*([!%].*)$")
SUPPORTED = "%timeit, %time, %pip, %cd, %pwd, %ls, %env, %who, %matplotlib, !command and the cell magics %%time, %%timeit, %%bash, %%sh, %%writefile"


class UsageError(Exception):
    """A magic used in a way it does not support (IPython's name for it)."""


class SList(list):
    """The lines of `x = !cmd`, as IPython gives them: a list, with .s (space-joined), .n (newline-joined) and .l (the list)."""

    @property
    def s(self):
        return " ".join(self)

    @property
    def n(self):
        return "\n".join(self)

    @property
    def l(self):  # noqa: E743 - IPython's name
        return list(self)


# ---- source transform ------------------------------------------------------------------------


def has_magic_lines(lines):
    """A cheap first look: a line that may hold a magic or a shell command (most code has none)."""
    for line in lines:
        stripped = line.lstrip()
        if stripped[:1] in ("!", "%") and stripped[:2] != "!=":
            return True
        if "=" in line and ("!" in line or "%" in line) and _assigned_magic(line) is not None:
            return True
    return False


def _assigned_magic(line):
    """(indent, target, rest) of `target = !cmd` or `target = %magic args`, or None."""
    match = ASSIGNED_MAGIC.match(line.rstrip("\r\n"))
    if match is None or match.group(3).startswith("%%"):
        return None
    return match.group(1), match.group(2), match.group(3)


def _call_of(text):
    """The Python expression that runs `!cmd` or `%magic args` (text without the indent)."""
    if text.startswith("!"):
        return f"{MAGIC_NAME}.system({text[1:].strip()!r})"
    body = text[1:]
    name, _, args = body.strip().partition(" ")
    return f"{MAGIC_NAME}.line({name!r}, {args.strip()!r})"


def _translate(line):
    """The line with its magic made a call (same indent, one line), or None when it holds none."""
    ending = line[len(line.rstrip("\r\n")) :]
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    text = stripped.rstrip("\r\n")
    if text[:1] in ("!", "%") and text[:2] != "!=" and len(text) > 1:
        return f"{indent}{_call_of(text)}{ending}"
    assigned = _assigned_magic(line)
    if assigned is None:
        return None
    indent, target, rest = assigned
    if len(rest) < 2:
        return None
    call = _call_of(rest)
    if rest.startswith("!"):
        call = f"{MAGIC_NAME}.getoutput({rest[1:].strip()!r})"
    return f"{indent}{target} = {call}{ending}"


def transform(lines):
    """The source with each magic line made a call, or None when there is none. A line is a magic
    only where a statement starts: the tokenizer decides, so text inside strings, a `%` continuing
    an expression in brackets or after a backslash, and `!=` are left alone. Line numbers stay."""
    import tokenize

    if lines and lines[0].startswith("%%"):
        return _cell_call(lines)
    out = []
    state = {"depth": 0, "type": tokenize.NEWLINE, "row": 0, "changed": False}
    source = iter(lines)

    def readline():
        line = next(source, "")
        if not line:
            return ""
        # At a statement's start: every token of the previous line was read and it ended a line.
        row = len(out) + 1
        if state["depth"] == 0 and state["type"] in (tokenize.NEWLINE, tokenize.NL) and state["row"] == row - 1:
            translated = _translate(line)
            if translated is not None:
                line = translated
                state["changed"] = True
        out.append(line)
        return line

    try:
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.OP:
                if token.string in ("(", "[", "{"):
                    state["depth"] += 1
                elif token.string in (")", "]", "}"):
                    state["depth"] = max(0, state["depth"] - 1)
            if token.type != tokenize.COMMENT:
                state["type"] = token.type
                state["row"] = token.end[0]
    except (tokenize.TokenError, SyntaxError):
        pass  # a real syntax error: the lines after it stay as written, and compile() reports it
    if not state["changed"]:
        return None
    out.extend(source)
    return "".join(out)


def _cell_call(lines):
    """A cell magic on the first line (`%%time`, `%%timeit`, `%%bash`, `%%sh`, `%%writefile`): the
    whole call becomes one call with the rest as its body."""
    name, _, args = lines[0][2:].strip().partition(" ")
    return f"{MAGIC_NAME}.cell({name!r}, {args.strip()!r}, {''.join(lines[1:])!r})\n"


def install():
    """Makes the magics reachable from the user's code (the transformed lines call them)."""
    if not hasattr(builtins, MAGIC_NAME):
        setattr(builtins, MAGIC_NAME, Magics())


# ---- running magics --------------------------------------------------------------------------


def _caller_namespace(depth=2):
    frame = sys._getframe(depth)
    return frame.f_globals, frame.f_locals


def _expand(command, namespace):
    """`{expression}` and `$name` from the user's variables, as IPython expands them; a command
    whose expansion fails is run as written (awk's `{print $1}` stays)."""
    glob, loc = namespace
    lookup = dict(glob)
    if loc is not glob:
        lookup.update(loc)
    try:
        text = re.sub(r"\{([^{}]+)\}", lambda m: str(eval(m.group(1), glob, lookup)), command)
    except Exception:
        text = command
    return re.sub(r"\$\$|\$([A-Za-z_]\w*)", lambda m: "$" if m.group(0) == "$$" else str(lookup[m.group(1)]) if m.group(1) in lookup else m.group(0), text)


def _shell():
    return "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"


def _run_shell(command, namespace):
    import subprocess

    frames.flush_std_streams()
    status = subprocess.run([_shell(), "-c", _expand(command, namespace)], stdin=subprocess.DEVNULL).returncode
    namespace[0]["_exit_code"] = status


def _format_time(seconds):
    """A duration with 3 significant digits in s, ms, µs or ns."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


class Magics:
    """What `!cmd`, `x = !cmd` and `%magic args` lines call (see transform)."""

    # Longest a %timeit measures (its runs), seconds: a call's time limit is shared with the rest of the code.
    TIMEIT_BUDGET = 3.0

    def system(self, command):
        """Runs a shell command, its output going to the call's output; `_exit_code` is its status."""
        _run_shell(command, _caller_namespace())

    def getoutput(self, command):
        """`x = !cmd`: the command's output lines (stderr still goes to the call's output)."""
        import subprocess

        namespace = _caller_namespace()
        frames.flush_std_streams()
        done = subprocess.run([_shell(), "-c", _expand(command, namespace)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        namespace[0]["_exit_code"] = done.returncode
        return SList(done.stdout.decode("utf-8", "replace").splitlines())

    def cell(self, name, args, body):
        """`%%name args` over the call's code: a shell script, a file to write, or Python to time."""
        namespace = _caller_namespace()
        if name in ("bash", "sh"):
            frames.flush_std_streams()
            import subprocess

            status = subprocess.run([_shell() if name == "bash" else "/bin/sh", "-c", body], stdin=subprocess.DEVNULL).returncode
            namespace[0]["_exit_code"] = status
            return None
        if name == "writefile":
            append = args.startswith("-a ")
            path = os.path.expanduser(args[3:].strip() if append else args.strip()).strip("'\"")
            if not path:
                raise UsageError("%%writefile needs a file name, like %%writefile script.py")
            with open(path, "a" if append else "w", encoding="utf-8") as file:
                file.write(body)
            print(f"{'Appended to' if append else 'Writing'} {path}")
            return None
        if name == "time":
            # The body keeps its line numbers in the call's file (the magic is line 1).
            code = compile("\n" + body, "main.py", "exec")
            return _timed(lambda: exec(code, *namespace))
        if name == "timeit":
            return self.magic_timeit(f"{args} {body}", namespace)
        raise UsageError(f"cell magic %%{name} is not supported here; supported: %%time, %%timeit, %%bash, %%sh, %%writefile")

    def line(self, name, args):
        handler = getattr(self, f"magic_{name}", None)
        if handler is None:
            if name.startswith("%"):
                raise UsageError(f"a cell magic (%{name}) works only as the first line of the code, over the rest of it")
            raise UsageError(f"line magic %{name} is not supported here; supported: {SUPPORTED}")
        return handler(args, _caller_namespace())

    def magic_pwd(self, args, namespace):
        return os.getcwd()

    def magic_cd(self, args, namespace):
        target = args.strip().strip("'\"") or os.environ.get("HOME") or "/workspace"
        if target == "-":
            target = self.__dict__.get("previous") or os.getcwd()
        before = os.getcwd()
        os.chdir(os.path.expanduser(target))
        self.previous = before
        print(os.getcwd())

    def magic_ls(self, args, namespace):
        _run_shell(f"ls -F {args}".rstrip(), namespace)

    def magic_pip(self, args, namespace):
        import shlex
        import subprocess

        frames.flush_std_streams()
        subprocess.run(["pip", *shlex.split(args)], stdin=subprocess.DEVNULL)

    def magic_env(self, args, namespace):
        args = args.strip()
        if not args:
            return dict(os.environ)
        name, sep, value = args.partition("=")
        if not sep:
            name, _, value = args.partition(" ")
            if not value.strip():
                return os.environ.get(name.strip())
        name = name.strip()
        os.environ[name] = _expand(value.strip(), namespace)
        print(f"env: {name}={os.environ[name]}")

    def magic_who(self, args, namespace):
        wanted = set(args.split())
        hidden = _preset_names()
        names = sorted(
            name
            for name, value in namespace[0].items()
            if not name.startswith("_") and name not in hidden and (not wanted or type(value).__name__ in wanted)
        )
        print("\t".join(names) if names else "Interactive namespace is empty.")

    def magic_matplotlib(self, args, namespace):
        """Figures already come back as images (plt.show() or left open): nothing to switch on."""

    def magic_time(self, args, namespace):
        """Runs the statement or expression once and prints its CPU and wall time; returns an expression's value."""
        code, is_expression = _compile_magic_code(args, "<time>")
        return _timed(lambda: eval(code, *namespace) if is_expression else exec(code, *namespace))

    def magic_timeit(self, args, namespace):
        """Times a statement as IPython does (-n loops, -r runs, -o returns the timings), within TIMEIT_BUDGET."""
        import shlex
        import timeit

        options, statement = _timeit_options(shlex, args)
        if not statement:
            raise UsageError("%timeit needs a statement, like %timeit sum(range(1000))")
        glob, loc = namespace
        scope = glob if loc is glob else {**glob, **loc}
        timer = timeit.Timer(statement, globals=scope)
        number = options.get("n")
        if number is None:
            number, spent = timer.autorange()
            per_run = spent
        else:
            per_run = timer.timeit(number)
        runs = options.get("r") or max(1, min(7, int(self.TIMEIT_BUDGET / max(per_run, 1e-9))))
        timings = [per_run / number] + [t / number for t in timer.repeat(runs - 1, number)] if runs > 1 else [per_run / number]
        mean = sum(timings) / len(timings)
        spread = (sum((t - mean) ** 2 for t in timings) / len(timings)) ** 0.5
        if "q" not in options:
            dev = f"± {_format_time(spread)} per loop (mean ± std. dev. of {len(timings)} run{'s' if len(timings) > 1 else ''}, {number} loop{'s' if number > 1 else ''} each)"
            print(f"{_format_time(mean)} {dev}")
        if "o" in options:
            return {"mean_s": mean, "stdev_s": spread, "runs": len(timings), "loops": number, "timings_s": timings}
        return None


def _timed(run):
    """run()'s value, after printing its CPU and wall time as IPython's %time does (also when it fails)."""
    import time

    before, start = os.times(), time.perf_counter()
    try:
        return run()
    finally:
        wall, after = time.perf_counter() - start, os.times()
        user, system = after.user - before.user, after.system - before.system
        print(f"CPU times: user {_format_time(user)}, sys: {_format_time(system)}, total: {_format_time(user + system)}\nWall time: {_format_time(wall)}")


def _timeit_options(shlex, args):
    """({'n': int, 'r': int, 'o': True, 'q': True}, statement) from %timeit's arguments."""
    options = {}
    rest = args.strip()
    while rest.startswith("-"):
        head, _, tail = rest.partition(" ")
        flag = head[1:2]
        if flag in ("n", "r"):
            value = head[2:]
            if not value:
                value, _, tail = tail.strip().partition(" ")
            try:
                options[flag] = max(1, int(value))
            except ValueError:
                raise UsageError(f"%timeit -{flag} needs a number, not {value!r}") from None
        elif flag in ("o", "q"):
            options[flag] = True
        else:
            break
        rest = tail.strip()
    return options, rest


def _compile_magic_code(source, filename):
    """(code, is_expression) for %time's argument."""
    if not source.strip():
        raise UsageError("%time needs a statement or expression, like %time sum(range(10**6))")
    try:
        return compile(source.strip(), filename, "eval"), True
    except SyntaxError:
        return compile(source.strip(), filename, "exec"), False


def _preset_names():
    """Names the runner puts in the user's namespace: %who does not list them."""
    import sandgate

    return {"call_mcp_tool", "callMCPTool", "ToolError", *sandgate._ops.__all__, "return_image", "return_content", "display"}


# ---- display() and tables --------------------------------------------------------------------


def table_text(value):
    """A pandas DataFrame or Series as a text table of bounded rows, columns and cell width; None for anything else."""
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return None
    if isinstance(value, pandas.DataFrame):
        return value.to_string(max_rows=TABLE_MAX_ROWS, min_rows=TABLE_MIN_ROWS, max_cols=TABLE_MAX_COLUMNS, max_colwidth=TABLE_MAX_COLWIDTH, show_dimensions=True)
    if isinstance(value, pandas.Series):
        return value.to_string(max_rows=TABLE_MAX_ROWS, min_rows=TABLE_MIN_ROWS, length=True, dtype=True, name=True)
    return None


def display(objects, options):
    """Shows each object now, as a notebook does: images (figures, PIL images, image bytes) as
    images, DataFrames and Series as tables, anything else as its text form."""
    for obj in objects:
        if _send_image(obj):
            continue
        table = table_text(obj)
        if table is not None:
            print(table)
            continue
        print(_text_of(obj))


def _send_image(obj):
    kind = type(obj)
    if kind in (int, float, bool, list, tuple) or obj is None:
        return False
    if kind is str and "<svg" not in obj[:4096]:
        return False
    if kind is dict and obj.get("type") != "image":
        return False
    import sandgate_images

    return sandgate_images.value_image(obj) is not None


def _text_of(obj):
    markdown = getattr(type(obj), "_repr_markdown_", None)
    if markdown is not None:
        text = markdown(obj)
        if isinstance(text, tuple) and text:
            text = text[0]
        if isinstance(text, str):
            return text
    if type(obj) in (dict, list, tuple, set):
        import pprint

        return pprint.pformat(obj, width=100, sort_dicts=False)
    return repr(obj)
