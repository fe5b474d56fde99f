// Code that tries to reach past loopback is told in one line that the sandbox has no network, as
// pip and imports already are, in every language; a refused connection on loopback is not.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 1, javascript: 1, bash: 1 });

const HINT = "no network in this sandbox: only loopback (127.0.0.1) is reachable";

describe("a network failure in the sandbox", () => {
  it("Python: a urllib request to a host name says there is no network, in the message and under the traceback", async () => {
    const r = await t.engine.execute({ language: "python", code: "import urllib.request\nurllib.request.urlopen('http://example.com', timeout=5)" });
    expect(r.status).toBe("error");
    expect(r.error?.type).toBe("URLError");
    expect(r.error?.message).toContain(HINT);
    expect(r.error?.traceback.trimEnd().split("\n").at(-1)).toContain(HINT);
  });

  it("Python: a socket to an outside address says it too; a refused loopback port does not", async () => {
    const out = await t.engine.execute({ language: "python", code: "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=5)" });
    expect(out.error?.message).toContain(HINT);
    const local = await t.engine.execute({ language: "python", code: "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=5)" });
    expect(local.error?.type).toBe("ConnectionRefusedError");
    expect(local.error?.traceback).not.toContain(HINT);
  });

  it("JavaScript: fetch and http to a host name say there is no network", async () => {
    const fetched = await t.engine.execute({ language: "javascript", code: "await fetch('http://example.com')" });
    expect(fetched.status).toBe("error");
    expect(fetched.error?.message).toContain(HINT);
    const http = await t.engine.execute({
      language: "javascript",
      code: "const http = require('http'); await new Promise((ok, fail) => http.get('http://example.com', ok).on('error', fail))",
    });
    expect(http.error?.message).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(http.error?.traceback).toContain(HINT);
  });

  it("Bash: curl and wget add one line on stderr and keep their exit status", async () => {
    const r = await t.engine.execute({ language: "bash", code: "curl -sS http://example.com; echo \"curl $?\"; wget -q http://example.com; echo \"wget $?\"; curl -sS http://127.0.0.1:9; echo \"local $?\"" });
    expect(r.stdout).toBe("curl 6\nwget 4\nlocal 7\n");
    expect(r.stderr.split("\n").filter((line) => line.includes(HINT))).toHaveLength(2);
  });
});

describe("the check for a network failure", () => {
  it("runs none of the code's own methods: an error with a `reason` property that never returns still ends at the time limit", async () => {
    const session = t.engine.sessions.create();
    try {
      await t.engine.execute({ language: "python", sessionId: session.id, code: "x = 41" });
      const code = "class Odd(OSError):\n    @property\n    def reason(self):\n        while True: pass\nraise Odd(5, 'odd')";
      const r = await t.engine.execute({ language: "python", sessionId: session.id, code, timeoutS: 5 });
      expect(r.status).toBe("error");
      expect(r.error?.message).toBe("[Errno 5] odd");
      const after = await t.engine.execute({ language: "python", sessionId: session.id, code: "x + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });
});
