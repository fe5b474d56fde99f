// A JavaScript require of a missing module names the user's file (main.js) in its require stack,
// not an invented noop.js, and still carries the no-network hint (real sandboxes).

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 1, bash: 0 });

describe("require of a missing module", () => {
  it("names main.js in the require stack and no file that does not exist", async () => {
    const result = await fx.engine.execute({ language: "javascript", code: "require('left-pad-nowhere')", timeoutS: 20 });
    expect(result.status).toBe("error");
    const text = `${result.error?.message ?? ""}\n${result.error?.traceback ?? ""}\n${result.stderr}`;
    expect(text).toContain("Cannot find module 'left-pad-nowhere'");
    expect(text).not.toContain("noop.js");
    expect(text).toContain("no network in this sandbox");
  });

  it("still resolves relative requires against the working directory", async () => {
    const session = fx.engine.sessions.create();
    try {
      await fx.engine.files.write(session.id, "lib/add.js", "module.exports = (a, b) => a + b;\n");
      const result = await fx.engine.execute({ language: "javascript", code: "require('./lib/add.js')(2, 3)", sessionId: session.id, timeoutS: 20 });
      expect(result.value).toBe(5);
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });
});
