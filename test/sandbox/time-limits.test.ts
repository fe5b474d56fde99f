// The two time settings: MAX_EXECUTION_TIME is the admin maximum (default 300 s), and
// SANDGATE_DEFAULT_TIMEOUT the time of a call that names none (default 30 s, never above the maximum).

import { describe, expect, it } from "vitest";
import { defaultTimeoutS, loadConfig } from "../../src/config/index.js";
import { isSandgateError } from "../../src/errors/index.js";
import { useTestEngine } from "../helpers.js";

describe("time limit settings", () => {
  it("default to 30 s per call and 300 s at most", () => {
    const { limits } = loadConfig({ SANDBOX_DIR: "/tmp/x" });
    expect(limits.maxExecutionTimeS).toBe(300);
    expect(defaultTimeoutS(limits)).toBe(30);
  });

  it("keep a lower MAX_EXECUTION_TIME set alone as both default and maximum, as before", () => {
    expect(defaultTimeoutS(loadConfig({ SANDBOX_DIR: "/tmp/x", MAX_EXECUTION_TIME: "20" }).limits)).toBe(20);
  });

  it("refuse a default above the maximum with an error naming both variables", () => {
    expect(() => loadConfig({ SANDBOX_DIR: "/tmp/x", MAX_EXECUTION_TIME: "60", SANDGATE_DEFAULT_TIMEOUT: "90" })).toThrow(/defaultExecutionTimeS.*MAX_EXECUTION_TIME/s);
    expect(defaultTimeoutS(loadConfig({ SANDBOX_DIR: "/tmp/x", MAX_EXECUTION_TIME: "600", SANDGATE_DEFAULT_TIMEOUT: "45" }).limits)).toBe(45);
  });
});

describe("time limits of calls", () => {
  const fx = useTestEngine({ MAX_EXECUTION_TIME: "3", SANDGATE_DEFAULT_TIMEOUT: "1" }, { python: 0, javascript: 0, bash: 1 });

  it("give a call without a timeout the default, let it ask for more up to the maximum, and refuse more than that", async () => {
    const { engine } = fx;
    const code = "sleep 1.5; echo done";
    expect((await engine.execute({ language: "bash", code })).status).toBe("timeout");
    expect(await engine.execute({ language: "bash", code, timeoutS: 2.5 })).toMatchObject({ status: "ok", stdout: "done\n" });
    let refused: unknown;
    await engine.execute({ language: "bash", code, timeoutS: 4 }).catch((error: unknown) => (refused = error));
    expect(isSandgateError(refused) && refused.code).toBe("LIMIT_EXCEEDED");
    expect(String((refused as Error).message)).toContain("admin maximum of 3 s");
  });
});
