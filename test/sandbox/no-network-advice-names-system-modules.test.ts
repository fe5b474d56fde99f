// Without a package set, a pip install and an import of a missing module tell the code which
// modules of note the system's Python has (Debian's numpy, pandas, matplotlib on this host),
// instead of a bare "what the system has" (real sandboxes).

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 1 });

describe("the no-network advice without a package set", () => {
  it("pip install names the system's modules of note", async () => {
    const result = await fx.engine.executeCommand({ command: "pip install scikit-learn", timeoutS: 15 });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/or use what the system has: numpy, pandas, matplotlib(, \w+)*\n$/);
  });

  it("an import of a missing module names them too, and they really import", async () => {
    const missing = await fx.engine.execute({ language: "python", code: "import sklearn_nowhere", timeoutS: 15 });
    const named = /or use what the system has: ([\w, ]+)$/.exec(missing.error?.message ?? "")?.[1]?.split(", ") ?? [];
    expect(named).toEqual(expect.arrayContaining(["numpy", "pandas", "matplotlib"]));
    const imported = await fx.engine.execute({ language: "python", code: `import importlib\n[importlib.import_module(n).__name__ for n in ${JSON.stringify(named)}]`, timeoutS: 20 });
    expect(imported.value).toEqual(named);
  });
});
