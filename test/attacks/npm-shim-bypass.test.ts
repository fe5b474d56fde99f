// npm and pip reached past the sandbox's shims (options before the command, the real npm by path,
// python3 -I) fail at once: the sandbox has no network, so nothing may wait on a registry or index.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

describe("npm installs inside a sandbox", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("npm with an option and its value before install gets the no-network advice at once", async () => {
    const result = await fx.engine.executeCommand({ command: "cd /tmp && npm --prefix /tmp install left-pad; npm --loglevel warn i is-odd", timeoutS: 20 });
    expect(result.status).not.toBe("timeout");
    expect(result.stderr).toContain("npm install: no network in this sandbox: ask the admin to add left-pad to node.packages");
    expect(result.stderr).toContain("npm i: no network in this sandbox: ask the admin to add is-odd to node.packages");
  }, 40_000);

  it("the real npm run by path, and registry commands the shim lets through, fail at once instead of retrying the registry", async () => {
    const result = await fx.engine.executeCommand({
      command: "cd /tmp && for c in '/usr/bin/npm install left-pad' 'npm view left-pad' 'npm -C /tmp search left' '/usr/bin/npx -y cowsay hi'; do $c >/dev/null 2>&1; echo \"$c: $?\"; done",
      timeoutS: 20,
    });
    expect(result.status).not.toBe("timeout");
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).not.toMatch(/: 0$/);
  }, 40_000);

  it("pip run past its shim (python3 -I ignores PYTHONPATH) fails at once instead of retrying the index", async () => {
    const result = await fx.engine.executeCommand({
      command: "cd /tmp && for c in 'python3 -I -m pip install --break-system-packages left-pad' 'python3 -I -m pip download left-pad' 'python3 -I -m pip index versions left-pad'; do $c >/dev/null 2>&1; echo \"$c: $?\"; done",
      timeoutS: 6,
    });
    expect(result.status).not.toBe("timeout");
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).not.toMatch(/: 0$/);
  }, 40_000);

  it("the advice names the packages asked for, not the values of options before them", async () => {
    const result = await fx.engine.executeCommand({
      command: "cd /tmp && pip install --index-url http://127.0.0.1:9/simple -t /tmp/t requests; npm install --registry http://127.0.0.1:9 left-pad",
      timeoutS: 20,
    });
    expect(result.status).not.toBe("timeout");
    expect(result.stderr).toContain("ask the admin to add requests to python.packages");
    expect(result.stderr).toContain("ask the admin to add left-pad to node.packages");
  }, 40_000);
});
