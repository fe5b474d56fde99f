// What a user of each language sees: output, last-expression values, errors with their own
// line numbers, top-level await, and state that persists inside a session only.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine();

describe("python", () => {
  it("prints, returns the last expression, and reports ok", async () => {
    const r = await t.engine.execute({ language: "python", code: "print('hi')\n{'a': [1, 2]}" });
    expect(r).toMatchObject({ status: "ok", exitCode: 0, stdout: "hi\n", value: { a: [1, 2] }, sessionId: null, truncated: false });
  });

  it("gives a traceback with the user's line numbers and no runner frames", async () => {
    const r = await t.engine.execute({ language: "python", code: "x = 1\ndef f():\n    return 1 / 0\nf()" });
    expect(r.status).toBe("error");
    expect(r.exitCode).toBe(1);
    expect(r.error?.type).toBe("ZeroDivisionError");
    expect(r.error?.traceback).toContain('main.py", line 3');
    expect(r.error?.traceback).toContain('main.py", line 4');
    expect(r.error?.traceback).not.toContain("python_runner");
  });

  it("reports a syntax error on its line", async () => {
    const r = await t.engine.execute({ language: "python", code: "a = 1\nb = (\n" });
    expect(r.error?.type).toBe("SyntaxError");
    expect(r.error?.traceback).toMatch(/line [23]/);
  });

  it("supports top-level await with asyncio.gather", async () => {
    const r = await t.engine.execute({
      language: "python",
      code: "import asyncio\nasync def sq(n):\n    await asyncio.sleep(0.01)\n    return n * n\nawait asyncio.gather(*(sq(i) for i in range(4)))",
    });
    expect(r.value).toEqual([0, 1, 4, 9]);
  });

  it("mirrors sys.exit codes", async () => {
    const r = await t.engine.execute({ language: "python", code: "import sys\nsys.exit(3)" });
    expect(r.status).toBe("error");
    expect(r.exitCode).toBe(3);
  });

  it("streams output while the code runs", async () => {
    const chunks: string[] = [];
    const r = await t.engine.execute({
      language: "python",
      code: "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.05)",
      onOutput: (stream, text) => chunks.push(`${stream}:${text}`),
    });
    expect(r.stdout).toBe("tick 0\ntick 1\ntick 2\n");
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.join("")).toContain("stdout:tick 0");
  });
});

describe("javascript and typescript", () => {
  it("returns the last expression and prints", async () => {
    const r = await t.engine.execute({ language: "javascript", code: "console.log('hi'); [1, 2].map((x) => x * 2)" });
    expect(r).toMatchObject({ status: "ok", stdout: "hi\n", value: [2, 4] });
  });

  it("supports top-level await", async () => {
    const r = await t.engine.execute({ language: "javascript", code: "const v = await new Promise((r) => setTimeout(() => r(7), 10));\nv * 6" });
    expect(r.value).toBe(42);
  });

  it("reports errors with the user's line", async () => {
    const r = await t.engine.execute({ language: "javascript", code: "const a = 1;\n\nthrow new TypeError('bad thing');" });
    expect(r.status).toBe("error");
    expect(r.error?.type).toBe("TypeError");
    expect(r.error?.message).toBe("bad thing");
    expect(r.error?.traceback).toContain("main.js:3");
  });

  it("transpiles TypeScript and maps errors to the user's lines", async () => {
    const ok = await t.engine.execute({ language: "typescript", code: "interface P { x: number }\nconst p: P = { x: 20 };\np.x + 22" });
    expect(ok.value).toBe(42);
    const bad = await t.engine.execute({ language: "typescript", code: "type T = string;\nconst s: T = 'a';\nthrow new Error('boom ' + s);" });
    expect(bad.error?.traceback).toContain("main.ts:3");
    const syntax = await t.engine.execute({ language: "typescript", code: "const a: number = 1;\nconst b = (;\n" });
    expect(syntax.status).toBe("error");
    expect(syntax.error?.type).toBe("SyntaxError");
    expect(syntax.error?.traceback).toContain("main.ts:2");
  });
});

describe("bash", () => {
  it("runs pipes, redirections, && and ||", async () => {
    const r = await t.engine.execute({ language: "bash", code: "echo b a c | tr ' ' '\\n' | sort > /tmp/x && cat /tmp/x; false || echo fallback; ls /nonexistent 2>/dev/null || echo missing" });
    expect(r).toMatchObject({ status: "ok", stdout: "a\nb\nc\nfallback\nmissing\n" });
  });

  it("mirrors the exit status", async () => {
    const r = await t.engine.execute({ language: "bash", code: "echo out; exit 4" });
    expect(r.status).toBe("error");
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toBe("out\n");
  });
});

describe("sessions", () => {
  it("keep Python globals, JavaScript bindings and Bash shell state between calls", async () => {
    const s = t.engine.sessions.create();
    await t.engine.execute({ language: "python", sessionId: s.id, code: "counter = 41\ndef bump():\n    global counter\n    counter += 1\n    return counter" });
    expect((await t.engine.execute({ language: "python", sessionId: s.id, code: "bump()" })).value).toBe(42);

    await t.engine.execute({ language: "javascript", sessionId: s.id, code: "let total = 40; function add(n) { total += n; return total }" });
    expect((await t.engine.execute({ language: "javascript", sessionId: s.id, code: "add(2)" })).value).toBe(42);
    await t.engine.execute({ language: "typescript", sessionId: s.id, code: "const late: number = await Promise.resolve(1);" });
    expect((await t.engine.execute({ language: "javascript", sessionId: s.id, code: "late + total" })).value).toBe(43);

    await t.engine.execute({ language: "bash", sessionId: s.id, code: "cd /tmp && GREETING=hello && greet() { echo \"$GREETING $1\"; }" });
    const b = await t.engine.execute({ language: "bash", sessionId: s.id, code: "pwd; greet world" });
    expect(b.stdout).toBe("/tmp\nhello world\n");
    await t.engine.sessions.stop(s.id);
  });

  it("share a workspace between languages, and it persists while the session lives", async () => {
    const s = t.engine.sessions.create("shared-ws");
    await t.engine.execute({ language: "bash", sessionId: s.id, code: "echo from-bash > /workspace/note.txt" });
    const r = await t.engine.execute({ language: "python", sessionId: s.id, code: "open('/workspace/note.txt').read().strip()" });
    expect(r.value).toBe("from-bash");
    await t.engine.sessions.stop(s.id);
  });

  it("leak nothing into a new session or the next stateless call", async () => {
    const s = t.engine.sessions.create();
    await t.engine.execute({ language: "python", sessionId: s.id, code: "leak = 'secret'\nopen('/workspace/leak.txt', 'w').write('x')\nopen('/tmp/leak.txt', 'w').write('x')" });
    const other = t.engine.sessions.create();
    const probe = "import os\n[('leak' in globals()), os.path.exists('/workspace/leak.txt'), os.path.exists('/tmp/leak.txt')]";
    expect((await t.engine.execute({ language: "python", sessionId: other.id, code: probe })).value).toEqual([false, false, false]);
    await t.engine.execute({ language: "python", code: "stateless_leak = 1\nopen('/workspace/s.txt', 'w').write('x')" });
    const next = await t.engine.execute({ language: "python", code: "import os\n['stateless_leak' in globals(), os.path.exists('/workspace/s.txt'), os.listdir('/workspace')]" });
    expect(next.value).toEqual([false, false, []]);
    await t.engine.sessions.stop(s.id);
    await t.engine.sessions.stop(other.id);
  });

  it("lose interpreter state but keep files after a timeout the code ignores, and say so", async () => {
    const s = t.engine.sessions.create();
    await t.engine.execute({ language: "python", sessionId: s.id, code: "v = 1\nopen('/workspace/kept.txt', 'w').write('k')" });
    // The interrupt sent at the time limit is ignored, so the interpreter is killed.
    const ignoring = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass";
    const slow = await t.engine.execute({ language: "python", sessionId: s.id, timeoutS: 1, code: ignoring });
    expect(slow.status).toBe("timeout");
    expect(slow.stateReset).toBe(true);
    const after = await t.engine.execute({ language: "python", sessionId: s.id, code: "['v' in globals(), open('/workspace/kept.txt').read()]" });
    expect(after.value).toEqual([false, "k"]);
    await t.engine.sessions.stop(s.id);
  });

  it("run concurrent calls to one session one after another, in order", async () => {
    const s = t.engine.sessions.create();
    await t.engine.execute({ language: "python", sessionId: s.id, code: "log = []" });
    const calls = [1, 2, 3].map((n) => t.engine.execute({ language: "python", sessionId: s.id, code: `import time\ntime.sleep(0.05)\nlog.append(${n})\nlist(log)` }));
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value)).toEqual([[1], [1, 2], [1, 2, 3]]);
    await t.engine.sessions.stop(s.id);
  });

  it("stop the running code when the caller aborts, and start afresh on the next call", async () => {
    const s = t.engine.sessions.create();
    await t.engine.execute({ language: "bash", sessionId: s.id, code: "echo kept > /workspace/f" });
    const controller = new AbortController();
    const started = Date.now();
    const pending = t.engine.execute({ language: "bash", sessionId: s.id, code: "echo begun; sleep 30", signal: controller.signal, onOutput: () => controller.abort() });
    const r = await pending;
    expect(r.status).toBe("killed");
    expect(Date.now() - started).toBeLessThan(10_000);
    const next = await t.engine.execute({ language: "bash", sessionId: s.id, code: "cat /workspace/f" });
    expect(next).toMatchObject({ status: "ok", stdout: "kept\n" });
    await t.engine.sessions.stop(s.id);
  });

  it("are listed, stopped, and unknown or ended ids give typed errors", async () => {
    const s = t.engine.sessions.create("listed-one");
    expect(t.engine.sessions.list().map((x) => x.id)).toContain("listed-one");
    await t.engine.sessions.stop(s.id);
    expect(t.engine.sessions.list().map((x) => x.id)).not.toContain("listed-one");
    await expect(t.engine.execute({ language: "python", code: "1", sessionId: "listed-one" })).rejects.toMatchObject({ code: "SESSION_EXPIRED" });
    await expect(t.engine.execute({ language: "python", code: "1", sessionId: "never-was" })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});

describe("bad input", () => {
  it("gets typed errors, never a crash", async () => {
    await expect(t.engine.execute({ language: "cobol", code: "x" })).rejects.toMatchObject({ code: "UNKNOWN_LANGUAGE" });
    await expect(t.engine.execute({ language: "python", code: "   " })).rejects.toMatchObject({ code: "CODE_EMPTY" });
    await expect(t.engine.execute({ language: "python", code: "x".repeat(t.config.limits.maxCodeBytes + 1) })).rejects.toMatchObject({ code: "CODE_TOO_LARGE" });
    await expect(t.engine.execute({ language: "python", code: "1", timeoutS: 10_000 })).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
    await expect(t.engine.execute({ language: "python", code: "1", memoryMb: 1_000_000 })).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
    expect((await t.engine.execute({ language: "python", code: "'still fine'" })).value).toBe("still fine");
  });
});
