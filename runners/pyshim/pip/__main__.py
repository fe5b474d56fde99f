# `python3 -m pip ...` in a sandbox: the shim in ../sandgate_pip.py decides.

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sandgate_pip  # noqa: E402

sys.exit(sandgate_pip.main(sys.argv[1:]))
