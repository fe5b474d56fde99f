# What sandboxed code is told when a package is missing: the admin's installed set and how to get
# more. The Python runner (import errors) and the pip shim use it; bin/npm and node_runner.cjs say the same.

ROOT = "/sandgate/packages"
# Written by `sandgate packages sync` (src/sandbox/package-sets.ts NAMES_FILE): the names, comma-separated.
NAMES_FILE = "sandgate-packages.txt"
SETTINGS = {"python": "python.packages", "node": "node.packages"}


def installed(language):
    """The names of the admin's packages for `language` ("python" or "node"), as synced."""
    try:
        with open(f"{ROOT}/{language}/{NAMES_FILE}", encoding="utf-8") as f:
            return [name for name in f.read().strip().split(",") if name]
    except OSError:
        return []


# Modules of note a host's Python may have under /usr (src/languages/python-modules.ts lists the same).
OF_NOTE = ("numpy", "pandas", "matplotlib", "scipy", "sklearn", "PIL", "sympy", "requests", "yaml", "bs4", "lxml", "openpyxl", "pyarrow", "polars", "seaborn", "statsmodels", "networkx")


def system_modules():
    """The modules of note this interpreter finds (found, not imported: nothing of theirs runs)."""
    import importlib.util

    found = []
    for name in OF_NOTE:
        try:
            if importlib.util.find_spec(name) is not None:
                found.append(name)
        except (ImportError, ValueError):
            pass
    return found


def advice(language, wanted):
    """One sentence: no package index is reachable, ask the admin for `wanted`, or use what is installed."""
    names = installed(language)
    system = system_modules() if language == "python" and not names else []
    have = (
        f"use the installed set: {', '.join(names)}"
        if names
        else f"use what the system has: {', '.join(system)}"
        if system
        else "use what the system has (no extra packages are installed)"
    )
    return f"no network in this sandbox: ask the admin to add {wanted} to {SETTINGS[language]} (then `sandgate packages sync`), or {have}"
