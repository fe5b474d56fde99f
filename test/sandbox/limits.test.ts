// Resource attacks inside real sandboxes: each is contained, reported with the right status,
// and leaves nothing running on the host.

import { describe, expect, it } from "vitest";
import { useTestEngine, hostProcessesMatching, waitFor } from "../helpers.js";
import { probeWhile } from "../fixtures/samplers.js";

const t = useTestEngine({ MAX_OUTPUT_SIZE: "4096", SANDGATE_OUTPUT_CAP: "1048576" });

describe("limits", () => {
  it("a memory bomb ends as memory_limit", async () => {
    const r = await t.engine.execute({ language: "python", memoryMb: 64, code: "x = []\nwhile True:\n    x.append(' ' * 10_000_000)" });
    expect(r.status).toBe("memory_limit");
    expect(r.error?.type).toMatch(/Memory/);
  });

  it("a JavaScript memory bomb ends as memory_limit too", async () => {
    const r = await t.engine.execute({ language: "javascript", memoryMb: 64, code: "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));" });
    expect(r.status).toBe("memory_limit");
    const after = await t.engine.execute({ language: "javascript", code: "'fine'" });
    expect(after.value).toBe("fine");
  });

  it("limits follow each call when cgroups are reused: a low limit, then a higher one, then the low one again", async () => {
    const grab = (mb: number) => `b = bytearray(${mb} * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\nlen(b) // 1048576`;
    expect((await t.engine.execute({ language: "python", memoryMb: 64, code: grab(150) })).status).toBe("memory_limit");
    const big = await t.engine.execute({ language: "python", memoryMb: 256, code: grab(150) });
    expect(big.status).toBe("ok");
    expect(big.value).toBe(150);
    expect((await t.engine.execute({ language: "python", memoryMb: 64, code: grab(150) })).status).toBe("memory_limit");
  });

  it("`while True: pass` ends as timeout, on time", async () => {
    const started = Date.now();
    const r = await t.engine.execute({ language: "python", timeoutS: 1, code: "while True:\n    pass" });
    expect(r.status).toBe("timeout");
    expect(r.error?.message).toContain("1 s");
    // Generous bound: the point is that it is stopped, not left running for the default 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a `yes` flood ends as output_limit with the process stopped", async () => {
    const r = await t.engine.execute({ language: "bash", code: "yes sandgate-flood" });
    expect(r.status).toBe("output_limit");
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(4096 + 300);
    expect(r.stdout).toContain("sandgate-flood");
    expect(await waitFor(() => hostProcessesMatching("sandgate-flood").length === 0)).toBe(true);
  });

  it("a fork bomb is contained and the host keeps working", async () => {
    // Another caller's code runs, call after call, while the bomb goes off.
    const { result: r, probes } = await probeWhile(
      t.engine.execute({ language: "bash", timeoutS: 5, flavor: "small", code: "b(){ b | b & }; b; sleep 2; echo survived" }),
      () => t.engine.execute({ language: "python", code: "print('host fine')" }),
    );
    expect(["ok", "timeout", "error"]).toContain(r.status);
    for (const probe of probes) expect(probe.stdout).toBe("host fine\n");
  });

  it("a thread bomb is contained", async () => {
    const r = await t.engine.execute({
      language: "python",
      timeoutS: 5,
      flavor: "small",
      code: `
import threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); n += 1
except RuntimeError as e:
    print("stopped at", n, "threads:", e)
`,
    });
    expect(r.status).toBe("ok");
    expect(r.stdout).toMatch(/stopped at \d+ threads/);
    const n = Number(/stopped at (\d+)/.exec(r.stdout)![1]);
    expect(n).toBeLessThan(64);
  });

  it("large output is cut to the display size and kept in full in the saved-output store", async () => {
    const r = await t.engine.execute({ language: "python", code: "for i in range(5000): print(f'line {i}')" });
    expect(r.status).toBe("ok");
    expect(r.truncated).toBe(true);
    expect(r.stdout).toContain("line 0\n");
    expect(r.stdout).toContain("line 4999\n");
    expect(r.stdout).toContain("bytes omitted");
    const [id] = r.fullOutput!.stdout!.split("/").slice(-2);
    const full = (await t.engine.readSavedOutput(id!, "stdout")).toString("utf8");
    expect(full.split("\n")).toHaveLength(5001);
  });

  it("a file larger than the file-size limit cannot be written", async () => {
    const r = await t.engine.execute({ language: "python", code: "open('/workspace/big', 'wb').write(b'x' * (80 * 1024 * 1024))" });
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/File too large|No space left/);
  });
});

describe("nothing outlives a call", () => {
  it("a setsid daemon is gone after the call", async () => {
    const tag = `sgdaemon${Date.now()}`;
    const r = await t.engine.execute({ language: "bash", code: `setsid bash -c 'exec -a ${tag} sleep 300' >/dev/null 2>&1 < /dev/null & disown; echo started` });
    expect(r.stdout).toBe("started\n");
    expect(await waitFor(() => hostProcessesMatching(tag).length === 0)).toBe(true);
  });

  it("a daemon in a session is gone after the call, while the session lives on", async () => {
    const session = t.engine.sessions.create();
    const tag = `sgsessdaemon${Date.now()}`;
    await t.engine.execute({ language: "python", sessionId: session.id, code: `import subprocess\np = subprocess.Popen(['bash', '-c', 'exec -a ${tag} sleep 300'], start_new_session=True)\nx = 41` });
    expect(await waitFor(() => hostProcessesMatching(tag).length === 0)).toBe(true);
    const r = await t.engine.execute({ language: "python", sessionId: session.id, code: "x + 1" });
    expect(r.value).toBe(42);
    await t.engine.sessions.stop(session.id);
  });

  it("a process that ignores SIGTERM is killed", async () => {
    const tag = `sgstubborn${Date.now()}`;
    const r = await t.engine.execute({
      language: "python",
      timeoutS: 2,
      code: `
import signal, subprocess, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen(['bash', '-c', 'trap "" TERM; exec -a ${tag} sleep 300'])
time.sleep(60)
`,
    });
    expect(r.status).toBe("timeout");
    expect(await waitFor(() => hostProcessesMatching(tag).length === 0)).toBe(true);
  });
});
