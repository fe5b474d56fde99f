// npx and npm exec of a package that is not installed name only that package in the no-network
// advice, not the arguments given to it, and never expand a glob into workspace file names
// (real sandboxes).

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 1 });

async function stderrOf(command: string): Promise<string> {
  const session = fx.engine.sessions.create();
  try {
    await fx.engine.files.write(session.id, "secret-plan.txt", "x");
    const result = await fx.engine.execute({ language: "bash", code: command, sessionId: session.id, timeoutS: 20 });
    expect(result.exitCode).toBe(1);
    return result.stderr;
  } finally {
    await fx.engine.sessions.stop(session.id);
  }
}

describe("npx and npm exec without network", () => {
  it("npx cowsay hello names cowsay only", async () => {
    const stderr = await stderrOf("npx cowsay hello world");
    expect(stderr).toContain("npx: no network in this sandbox: ask the admin to add cowsay to node.packages");
    expect(stderr).not.toContain("hello");
  });

  it("npm exec -- cowsay hello names cowsay only", async () => {
    const stderr = await stderrOf("npm exec -- cowsay hello");
    expect(stderr).toContain("ask the admin to add cowsay to node.packages");
    expect(stderr).not.toContain("hello");
  });

  it("npm install of a quoted glob names the glob, not the workspace's files", async () => {
    const stderr = await stderrOf("npm install '*'");
    expect(stderr).toContain("ask the admin to add * to node.packages");
    expect(stderr).not.toContain("secret-plan");
  });
});
