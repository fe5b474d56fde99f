# The `pip` sandboxed code finds (bin/pip, bin/pip3 and `python3 -m pip`): install, download and
# wheel fail at once with what to do instead; everything else (list, show, freeze...) is the real pip.

import os
import sys

# Commands that would reach a package index. With an allowed index (a later setting), these are
# where a per-session install into /workspace/.packages would start instead.
NEEDS_INDEX = {"install", "download", "wheel"}
# pip's global options that take a value, so the command is found after them.
VALUED_OPTIONS = {"--python", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert", "--cache-dir", "--use-feature", "--use-deprecated", "--keyring-provider"}
# install/download/wheel options that take a value as the next argument.
COMMAND_VALUED_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--root-user-action", "--report", "-d", "--dest", "-w", "--wheel-dir", "-C", "--config-settings", "--global-option", "--build-option", "--no-binary", "--only-binary"}
SHIM_DIR = os.path.dirname(os.path.abspath(__file__))


def _split(args):
    """(command, the arguments after it); command is None when there is none."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in VALUED_OPTIONS:
            i += 2
            continue
        if not arg.startswith("-"):
            return arg, args[i + 1:]
        i += 1
    return None, []


def _wanted(rest):
    names, skip, files = [], False, []
    for index, arg in enumerate(rest):
        if skip:
            skip = False
            continue
        if arg in ("-r", "--requirement", "-c", "--constraint"):
            skip = True
            if arg in ("-r", "--requirement") and index + 1 < len(rest):
                files.append(rest[index + 1])
            continue
        if arg in COMMAND_VALUED_OPTIONS or arg in VALUED_OPTIONS:
            skip = True  # an index URL, a directory...: not a package
            continue
        if arg.startswith("-"):
            continue
        names.append(arg)
    if files:
        names.append("the packages in " + " and ".join(files))
    return ", ".join(names) if names else "the package"


def main(args):
    command, rest = _split(args)
    if command in NEEDS_INDEX:
        sys.path.insert(0, os.path.dirname(SHIM_DIR))
        import sandgate_packages

        sys.stderr.write(f"pip {command}: {sandgate_packages.advice('python', _wanted(rest))}\n")
        return 1
    # The real pip, without this directory on its path so it finds itself.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != SHIM_DIR)
    # No index to ask for a newer pip, and no cache to write into the workspace.
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    env.setdefault("PIP_NO_CACHE_DIR", "1")
    python = sys.executable or "/usr/bin/python3"
    os.execve(python, [python, "-m", "pip", *args], env)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
