// The built server against programs of a few hundred bytes made to fold huge strings in the analysis
// (analysed inline, on the event loop): each is refused, nothing of it runs, and the server lives on.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../fixtures/cli.js";
import { FOLD_BOMBS } from "../fixtures/fold-bombs.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-fold-bounds-"));
let server: ServeProcess;

beforeAll(async () => {
  server = await startServe({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  error: { code: string; message: string };
  stdout: string;
  action: string;
  level: string;
  findings: { rule_id: string; severity: string }[];
}

const post = async (path: string, body: object): Promise<{ status: number; json: Answer }> => {
  const response = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Answer };
};

/** A first line with a side effect, so a run of any part of the program shows in the workspace. */
const MARK: Record<string, string> = {
  python: "open('/workspace/ran','w').write('1')",
  javascript: "require('fs').writeFileSync('/workspace/ran','1')",
  typescript: "require('fs').writeFileSync('/workspace/ran','1')",
  bash: "echo 1 > /workspace/ran",
};

const folding = FOLD_BOMBS.filter((bomb) => bomb.folds);

describe("a server given code that folds huge strings in its analysis", () => {
  it("refuses every such program at POST /execute with POLICY_BLOCKED (analysis.failed), answering within seconds", async () => {
    for (const bomb of folding) {
      const code = `${MARK[bomb.language]}\n${bomb.code}`;
      expect(code.length, bomb.name).toBeLessThan(600);
      const started = performance.now();
      const { status, json } = await post("/execute", { code, language: bomb.language, session_id: "bombs" });
      expect(performance.now() - started, bomb.name).toBeLessThan(10_000);
      expect(status, bomb.name).toBe(403);
      expect(json.error.code, bomb.name).toBe("POLICY_BLOCKED");
      expect(json.error.message, bomb.name).toMatch(/analysis\.failed/);
    }
  }, 120_000);

  it("refuses them as background jobs and answers POST /security/analyze with the critical finding", async () => {
    const bomb = folding[0]!;
    const job = await post("/execute", { code: `${MARK[bomb.language]}\n${bomb.code}`, language: bomb.language, session_id: "bombs", background: true });
    expect(job.status).toBe(403);
    expect(job.json.error.code).toBe("POLICY_BLOCKED");
    const analysis = await post("/security/analyze", { code: bomb.code, language: bomb.language });
    expect(analysis.status).toBe(200);
    expect(analysis.json).toMatchObject({ action: "block", level: "critical" });
    expect(analysis.json.findings).toEqual([expect.objectContaining({ rule_id: "analysis.failed", severity: "critical" })]);
  }, 60_000);

  it("is still alive afterwards, and none of the programs ran", async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const listing = await post("/execute", { code: "ls -A /workspace; echo done", language: "bash", session_id: "bombs" });
    expect(listing.json.stdout).toBe("done\n");
    expect(server.child.exitCode).toBeNull();
  }, 60_000);
});
