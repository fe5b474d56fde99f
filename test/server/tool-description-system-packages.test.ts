// The execute_code description tells an agent which Python modules of note the host image has
// (Debian's python3-* under /usr, as install.sh's data-science default installs them), even with
// no package set synced, and every module it names really imports in a sandbox; GET /languages
// lists them as the Python entry's system_modules.

import { describe, expect, it } from "vitest";
import { PYTHON_MODULES_OF_NOTE } from "../../src/languages/index.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("execute_code's description on a host with Debian's data-science packages", () => {
  it("names the system's numpy, pandas and matplotlib, each module it names imports in a sandbox, and /languages lists them", async () => {
    await withServer(fx, {}, async (server, api) => {
      const { client } = await connectMcp(server.url);
      try {
        const { tools } = await client.listTools();
        const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
        const named = /Python has ([^;.]+)/.exec(description)?.[1]?.split(", ") ?? [];
        // This host has python3-numpy, -pandas, -matplotlib and -pil (see the test setup notes).
        expect(named).toEqual(expect.arrayContaining(["numpy", "pandas", "matplotlib", "PIL"]));
        expect(named.every((name) => PYTHON_MODULES_OF_NOTE.some(([module]) => module === name))).toBe(true);
        expect(description).toContain("pip and npm cannot install more (no network)");
        const result = await fx.engine.execute({ language: "python", code: `import importlib\n[importlib.import_module(n).__name__ for n in ${JSON.stringify(named)}]`, timeoutS: 20 });
        expect(result.status).toBe("ok");
        expect(result.value).toEqual(named);
        // GET /languages says the same for Python, and nothing of the kind for the others.
        const reply = await api<{ languages: Array<{ name: string; system_modules?: string[] }> }>("/languages");
        const byName = Object.fromEntries(reply.body.languages.map((l) => [l.name, l.system_modules]));
        expect(byName.python).toEqual(named);
        expect(byName.javascript).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  });
});
