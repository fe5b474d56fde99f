# Shadows pip for `python3 -m pip` in a sandbox (see ../sandgate_pip.py). Imported as a library
# (`import pip`), it steps aside: the real pip replaces it in sys.modules.

import os
import sys

_shim_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if sys.argv[:1] != ["-m"]:
    # While `-m` locates a module, sys.argv[0] is "-m"; anything else is a plain import.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _shim_dir]
    del sys.modules[__name__]
    import importlib

    sys.modules[__name__] = importlib.import_module(__name__)
