// A Python session sees the servers.* modules of the current tool list: after an upstream server changes its
// tools (notifications/tools/list_changed), the next execution imports the new ones, keeping the session's state.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool } from "../fixtures/mcp-client.js";
import { waitFor } from "../helpers.js";

const SERVER = fileURLToPath(new URL("../fixtures/upstream/changing-tools.mjs", import.meta.url));

let dir: string;
let stack: CodeModeStack;

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  error?: { type: string; message: string };
}

async function run(language: string, code: string, session: string): Promise<WireResult> {
  const result = await callTool(stack.client, "execute_code", { language, code, session_id: session });
  return result.structuredContent as unknown as WireResult;
}

/** Waits until the catalog (and the tree on disk) has, or no longer has, `id`. */
async function catalogHas(id: string, present: boolean): Promise<void> {
  expect(await waitFor(() => (stack.codeMode.catalog.resolve(id) !== undefined) === present, 10_000)).toBe(true);
  await stack.codeMode.catalog.settled();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-py-refresh-"));
  chmodSync(dir, 0o755);
  stack = await startCodeModeStack(dir, {
    servers: { changing: { command: process.execPath, args: [SERVER] } },
    pool: { python: 0, javascript: 0, bash: 0 },
    name: "py-refresh-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("servers.* modules in a Python session after the tool list changed", () => {
  it("imports added tools, rebinds imported names to the new wrappers, and a removed tool fails clearly", async () => {
    const first = await run(
      "python",
      ["import servers.changing", "from servers.changing import hello", "from servers import changing", "state = 41", "print(await hello(who='a'))"].join("\n"),
      "refresh",
    );
    expect(first.status, first.stderr).toBe("ok");
    expect(first.stdout).toContain("'who': 'a'");

    const added = await run("python", "await servers.changing.add_tool(name='greet')", "refresh");
    expect(added.status, added.stderr).toBe("ok");
    await catalogHas("changing.greet", true);

    const second = await run(
      "python",
      [
        "import servers.changing",
        "from servers.changing import greet",
        "print(state + 1, await greet(who='b'), await changing.greet(who='c'), await servers.changing.greet(who='d'))",
      ].join("\n"),
      "refresh",
    );
    expect(second.status, second.stderr).toBe("ok");
    expect(second.stdout).toMatch(/^42 .*'tool': 'greet'.*'who': 'b'.*'who': 'c'.*'who': 'd'/);

    // hello now takes `name`: the name bound by `from servers.changing import hello` is the new wrapper.
    await run("python", "await changing.add_tool(name='hello', param='name')", "refresh");
    expect(await waitFor(() => JSON.stringify(stack.codeMode.catalog.resolve("changing.hello")?.inputSchema).includes('"name"'), 10_000)).toBe(true);
    await stack.codeMode.catalog.settled();
    const renamed = await run("python", "print('who' in hello.__doc__, 'name' in hello.__doc__)\nprint(await hello(name='z'))", "refresh");
    expect(renamed.status, renamed.stderr).toBe("ok");
    expect(renamed.stdout).toContain("False True");
    expect(renamed.stdout).toContain("'name': 'z'");

    await run("python", "await changing.remove_tool(name='greet')", "refresh");
    await catalogHas("changing.greet", false);
    const gone = await run("python", "await greet(who='x')", "refresh");
    expect(gone.status).toBe("error");
    expect(gone.error?.message).toMatch(/server `changing` has no tool `greet`/);
    const kind = await run("python", "try:\n    await greet(who='x')\nexcept ToolError as e:\n    print(e.kind)", "refresh");
    expect(kind.stdout.trim()).toBe("ToolNotFound");
    const attr = await run("python", "import servers.changing\nservers.changing.greet", "refresh");
    expect(attr.error?.message).toMatch(/greet/);
    const still = await run("python", "state", "refresh");
    expect(still.status).toBe("ok");
  });

  it("JavaScript sees added tools in the same session through sandgate:servers modules", async () => {
    const before = await run("javascript", 'const { hello } = await import("sandgate:servers/changing");\nawait hello({ name: "j" })', "js-refresh");
    expect(before.status, before.stderr).toBe("ok");
    await run("javascript", 'await servers.changing.addTool({ name: "wave" })', "js-refresh");
    await catalogHas("changing.wave", true);
    const after = await run("javascript", 'const { wave } = await import("sandgate:servers/changing");\nconsole.log(JSON.stringify(await wave({ who: "k" })))', "js-refresh");
    expect(after.status, after.stderr).toBe("ok");
    expect(after.stdout).toContain('"tool":"wave"');
  });
});

describe("a server that joins after a Python session started", () => {
  it("is importable in that session once it is ready, and `servers` lists it", async () => {
    const lateDir = mkdtempSync(join(tmpdir(), "sandgate-py-late-"));
    chmodSync(lateDir, 0o755);
    const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
    // Fails its first start, then is server-everything: it joins when sandgate retries it.
    const script = 'n=$(cat "$1" 2>/dev/null || echo 0); echo $((n+1)) > "$1"; [ "$n" -lt 1 ] && exit 3; exec "$2" "$3" stdio';
    const late = await startCodeModeStack(lateDir, {
      servers: { late: { command: "/bin/sh", args: ["-c", script, "late", join(lateDir, "starts"), process.execPath, EVERYTHING], env: {} } },
      codeMode: { retryFailedS: 1, retryFailedMaxS: 2 },
      pool: { python: 0, javascript: 0, bash: 0 },
      name: "py-late-test",
    });
    try {
      const exec = async (code: string): Promise<WireResult> =>
        (await callTool(late.client, "execute_code", { language: "python", code, session_id: "late" })).structuredContent as unknown as WireResult;
      const before = await exec("import servers\nkept = 'state'\nprint(servers.__all__)");
      expect(before.stdout.trim()).toBe("[]");
      expect(await waitFor(() => late.codeMode.catalog.resolve("late.echo") !== undefined, 20_000)).toBe(true);
      await late.codeMode.catalog.settled();
      const after = await exec("import servers.late\nfrom servers.late import echo\nprint(servers.__all__, kept, await echo(message='hi'))");
      expect(after.status, after.stderr).toBe("ok");
      expect(after.stdout.trim()).toBe("['late'] state Echo: hi");
    } finally {
      await late.close();
      rmSync(lateDir, { recursive: true, force: true });
    }
  }, 60_000);
});
