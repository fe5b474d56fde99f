// The Python modules a data task reaches for first, and which of them the host image's Python
// has: sandboxes see the host's /usr read-only, so a module installed there imports inside too.

import { existsSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";

/** Import names, with the Debian package of each where there is one (doctor's how-to-add names them). */
export const PYTHON_MODULES_OF_NOTE: ReadonlyArray<readonly [module: string, aptPackage: string | undefined]> = [
  ["numpy", "python3-numpy"], ["pandas", "python3-pandas"], ["matplotlib", "python3-matplotlib"], ["scipy", "python3-scipy"],
  ["sklearn", "python3-sklearn"], ["PIL", "python3-pil"], ["sympy", "python3-sympy"], ["requests", "python3-requests"],
  ["yaml", "python3-yaml"], ["bs4", "python3-bs4"], ["lxml", "python3-lxml"], ["openpyxl", "python3-openpyxl"],
  ["pyarrow", undefined], ["polars", undefined], ["seaborn", "python3-seaborn"], ["statsmodels", "python3-statsmodels"],
  ["networkx", "python3-networkx"],
];

/** The system directories an interpreter of this X.Y version imports from (Debian's and the usual others). */
function siteDirs(version: string | undefined): string[] {
  const dirs = ["/usr/lib/python3/dist-packages"];
  if (version !== undefined) {
    for (const lib of ["/usr/lib", "/usr/lib64", "/usr/local/lib"]) dirs.push(join(lib, `python${version}`, "dist-packages"), join(lib, `python${version}`, "site-packages"));
  }
  return dirs;
}

/**
 * The modules of note that the system Python under /usr has, found by their files without
 * running anything (for tool descriptions: a guide, not a promise; `sandgate doctor` imports them
 * for real). Empty when the interpreter is not under /usr, where sandboxes would not see it.
 */
export function systemPythonModules(interpreter: string): string[] {
  let resolved: string;
  try {
    resolved = realpathSync(interpreter);
  } catch {
    return [];
  }
  if (!resolved.startsWith("/usr/")) return [];
  const version = /^python(3\.\d+)$/.exec(basename(resolved))?.[1];
  const dirs = siteDirs(version);
  return PYTHON_MODULES_OF_NOTE.map(([module]) => module).filter((module) =>
    dirs.some((dir) => existsSync(join(dir, module, "__init__.py")) || existsSync(join(dir, `${module}.py`))),
  );
}
