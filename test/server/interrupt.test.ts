// A timeout or cancel in a Python or JavaScript session interrupts the code and keeps the session's
// state; code that will not stop is killed, and the first result the caller sees afterwards says so.

import { describe, expect, it } from "vitest";
import { useTestEngine, withSession } from "../helpers.js";
import { withServer } from "../server-helpers.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
/** For code that ignores the interrupt and is killed: the grace it is given is waited out, so it is short here (2 s by default). */
const stubborn = useTestEngine({}, { python: 0, javascript: 0, bash: 0 }, { interruptGraceMs: 700 });

/** Python code whose value lists the live (not zombie) `sleep` processes in the sandbox. */
const LIVE_SLEEPS = "import os\n[n for n in os.listdir('/proc') if n.isdigit() and open(f'/proc/{n}/stat').read().split(') ')[0].endswith('(sleep') and open(f'/proc/{n}/stat').read().split(') ')[1][0] not in 'ZX']";

describe("a Python session", () => {
  for (const [what, code] of <Array<[string, string]>>[
    ["a busy loop", "while True: pass"],
    ["a sleep", "import time\ntime.sleep(100)"],
    ["a blocking read of a pipe", "import os\nr, w = os.pipe()\nos.read(r, 1)"],
    ["a subprocess wait", "import subprocess\nsubprocess.run(['sleep', '100'])"],
    ["an awaited sleep", "import asyncio\nawait asyncio.sleep(100)"],
  ]) {
    it(`keeps its variables when ${what} times out, and says where the code was`, async () => {
      await withSession(t.engine, async (sessionId) => {
        await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
        const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 1, code });
        expect(slow.status).toBe("timeout");
        expect(slow.stateReset).toBeUndefined();
        expect(slow.error?.type).toBe("Timeout");
        expect(slow.error?.message).toMatch(/interrupted; the interpreter and its state .* are kept/);
        expect(slow.error?.traceback).toContain("KeyboardInterrupt");
        const after = await t.engine.execute({ language: "python", sessionId, code: "x + 1" });
        expect(after).toMatchObject({ status: "ok", value: 42 });
        expect(after.stateReset).toBeUndefined();
      });
    });
  }

  it("kills the processes the interrupted code started", async () => {
    await withSession(t.engine, async (sessionId) => {
      const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 1, code: "import subprocess\np = subprocess.Popen(['sleep', '100'])\nwhile True: pass" });
      expect(slow.status).toBe("timeout");
      const after = await t.engine.execute({ language: "python", sessionId, code: LIVE_SLEEPS });
      expect(after.value).toEqual([]);
    });
  });

  it("is killed when its code swallows the interrupt, and that result says state_reset", async () => {
    await withSession(stubborn.engine, async (sessionId) => {
      await stubborn.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const code = "import time\nwhile True:\n    try:\n        time.sleep(100)\n    except KeyboardInterrupt:\n        pass";
      const swallowed = await stubborn.engine.execute({ language: "python", sessionId, timeoutS: 1, code });
      expect(swallowed.status).toBe("timeout");
      expect(swallowed.stateReset).toBe(true);
      expect(swallowed.error?.message).toMatch(/did not stop within 0\.7 s of an interrupt/);
      const after = await stubborn.engine.execute({ language: "python", sessionId, code: "'x' in globals()" });
      expect(after.value).toBe(false);
    });
  });

  it("keeps its variables when the caller cancels a running call", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const controller = new AbortController();
      const cancelled = await t.engine.execute({
        language: "python",
        sessionId,
        code: "import time\nprint('begun', flush=True)\ntime.sleep(100)",
        signal: controller.signal,
        onOutput: () => controller.abort(),
      });
      expect(cancelled.status).toBe("killed");
      expect(cancelled.stateReset).toBeUndefined();
      const after = await t.engine.execute({ language: "python", sessionId, code: "x + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
      expect(after.stateReset).toBeUndefined();
    });
  });

  it("says state_reset on the next call after a cancelled call had to be killed", async () => {
    await withSession(stubborn.engine, async (sessionId) => {
      await stubborn.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const controller = new AbortController();
      await stubborn.engine.execute({
        language: "python",
        sessionId,
        code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('begun', flush=True)\nwhile True: pass",
        signal: controller.signal,
        onOutput: () => controller.abort(),
      });
      const next = await stubborn.engine.execute({ language: "python", sessionId, code: "'x' in globals()" });
      expect(next.value).toBe(false);
      expect(next.stateReset).toBe(true);
      const later = await stubborn.engine.execute({ language: "python", sessionId, code: "1" });
      expect(later.stateReset).toBeUndefined();
    });
  });

  it("says state_reset on the next call after its idle interpreter died", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      t.engine.sessions.manager.get("local", sessionId).sandbox("python")?.terminate();
      const next = await t.engine.execute({ language: "python", sessionId, code: "'x' in globals()" });
      expect(next.value).toBe(false);
      expect(next.stateReset).toBe(true);
    });
  });
});

describe("a JavaScript session", () => {
  for (const [what, code] of <Array<[string, string]>>[
    ["a synchronous loop", "for (;;) {}"],
    ["a promise that never settles", "await new Promise(() => {})"],
    ["a loop after an await", "await 0;\nwhile (true) { await new Promise((r) => setTimeout(r, 10)); }"],
  ]) {
    it(`keeps its globals when ${what} times out`, async () => {
      await withSession(t.engine, async (sessionId) => {
        await t.engine.execute({ language: "javascript", sessionId, code: "globalThis.x = 41" });
        const slow = await t.engine.execute({ language: "javascript", sessionId, timeoutS: 1, code });
        expect(slow.status).toBe("timeout");
        expect(slow.stateReset).toBeUndefined();
        expect(slow.error?.message).toMatch(/interrupted/);
        const after = await t.engine.execute({ language: "javascript", sessionId, code: "x + 1" });
        expect(after).toMatchObject({ status: "ok", value: 42 });
        expect(after.stateReset).toBeUndefined();
      });
    });
  }

  for (const [what, wait] of <Array<[string, string]>>[
    ["interrupted while synchronous", "for (;;) {}"],
    ["abandoned while it awaited", "await new Promise(() => {})"],
  ]) {
    it(`stops the timers of a call ${what}, and keeps those of a call that ended`, async () => {
      await withSession(t.engine, async (sessionId) => {
        await t.engine.execute({ language: "javascript", sessionId, code: "globalThis.kept = 0; setInterval(() => { kept++; }, 10); 1" });
        const code = `globalThis.ticks = 0;\nsetInterval(() => { ticks++; }, 10);\nconst loop = () => setImmediate(loop);\nloop();\n${wait}`;
        const slow = await t.engine.execute({ language: "javascript", sessionId, timeoutS: 1, code });
        expect(slow.status).toBe("timeout");
        expect(slow.stateReset).toBeUndefined();
        const check = "const before = [ticks, kept];\nawait new Promise((resolve) => setTimeout(resolve, 300));\n[ticks === before[0], kept > before[1]]";
        const after = await t.engine.execute({ language: "javascript", sessionId, code: check });
        expect(after.value).toEqual([true, true]);
      });
    });
  }

  it("is killed when a busy loop runs after an await, and that result says state_reset", async () => {
    await withSession(stubborn.engine, async (sessionId) => {
      await stubborn.engine.execute({ language: "javascript", sessionId, code: "globalThis.x = 41" });
      const stuck = await stubborn.engine.execute({ language: "javascript", sessionId, timeoutS: 1, code: "await 0;\nfor (;;) {}" });
      expect(stuck.status).toBe("timeout");
      expect(stuck.stateReset).toBe(true);
      const after = await stubborn.engine.execute({ language: "javascript", sessionId, code: "typeof x" });
      expect(after.value).toBe("undefined");
    });
  });
});

describe("a stateless call", () => {
  it("is still stopped at its time limit, whatever the code does with the interrupt", async () => {
    const r = await t.engine.execute({ language: "python", timeoutS: 1, code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass" });
    expect(r.status).toBe("timeout");
  });
});

describe("over REST", () => {
  it("a call cancelled by closing its request, whose code had to be killed, makes the next call say state_reset", async () => {
    await withServer(stubborn, {}, async (server, api) => {
      const sessionId = "rest-cancel";
      expect((await api<{ status: string }>("/execute", { json: { language: "python", session_id: sessionId, code: "x = 41" } })).body.status).toBe("ok");
      const controller = new AbortController();
      const code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('begun', flush=True)\nwhile True: pass";
      const res = await fetch(`${server.url}/execute?stream=1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ language: "python", session_id: sessionId, code }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      let seen = "";
      while (!seen.includes("begun")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value as Uint8Array);
      }
      controller.abort();
      const next = await api<{ value: unknown; state_reset?: boolean }>("/execute", { json: { language: "python", session_id: sessionId, code: "'x' in globals()" } });
      expect(next.body.value).toBe(false);
      expect(next.body.state_reset).toBe(true);
      const later = await api<{ state_reset?: boolean }>("/execute", { json: { language: "python", session_id: sessionId, code: "1" } });
      expect(later.body.state_reset).toBeUndefined();
    });
  });
});

describe("over MCP", () => {
  it("the agent reads whether a stopped call kept the session's state, and where the code was", async () => {
    await withServer(stubborn, {}, async (server) => {
      const { client } = await connectMcp(server.url);
      try {
        await callTool(client, "execute_code", { language: "python", session_id: "told", code: "x = 41" });
        const kept = await callTool(client, "execute_code", { language: "python", session_id: "told", timeout: 1, code: "import time\ntime.sleep(100)" });
        expect(kept.structuredContent.status).toBe("timeout");
        expect(toolText(kept)).toMatch(/interrupted and the session's variables and imports are kept/);
        expect(toolText(kept)).toMatch(/line 2[\s\S]*KeyboardInterrupt/);
        const code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass";
        const lost = await callTool(client, "execute_code", { language: "python", session_id: "told", timeout: 1, code });
        expect(lost.structuredContent.state_reset).toBe(true);
        expect(toolText(lost)).toMatch(/the interpreter was killed, so the session's variables and imports are gone/);
      } finally {
        await client.close();
      }
    });
  });
});
