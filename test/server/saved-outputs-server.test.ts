// Saved full outputs through the real server on port 0: the caller that ran the code reads them
// by REST path and MCP resource (stateless and session calls alike); another caller cannot.

import { describe, expect, it } from "vitest";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { bearer, expectError, useTestServer } from "../server-helpers.js";

const ALICE = "alice-key-0123456789";
const BOB = "bob-key-0123456789ab";

const rest = useTestServer({ pool: { python: 1, javascript: 0, bash: 0 }, server: { apiKeys: { alice: ALICE, bob: BOB } } });
const { api } = rest;

const mcpClient = async (key: string) => (await connectMcp(rest.server.url, { name: "saved-outputs-test", headers: bearer(key) })).client;

const FLOOD = "import sys\nsys.stdout.write('s' * 150000 + 'TAIL')\nsys.stderr.write('e' * 100000)";

describe("saved full outputs over REST and MCP", () => {
  it("are read back by their owner only, for stateless and session calls, and the result names no host path", async () => {
    for (const sessionId of [undefined, "outputs-session"]) {
      const run = await api<WireExecutionResult>("/execute", {
        json: { language: "python", code: FLOOD, ...(sessionId ? { session_id: sessionId } : {}) },
        headers: bearer(ALICE),
      });
      expect(run.status).toBe(200);
      const uri = run.body.full_output?.stdout ?? "";
      expect(uri).toMatch(/^sandgate:\/\/outputs\/[A-Za-z0-9_-]{24}\/stdout$/);
      expect(run.body.full_output?.stderr).toBe(uri.replace(/stdout$/, "stderr"));
      const id = uri.split("/").at(-2)!;
      expect(run.body.stderr).toContain(`GET /outputs/${id}/stderr`);
      expect(JSON.stringify(run.body)).not.toContain(rest.fx.dir);
      expect(JSON.stringify(run.body)).not.toContain(".sandgate");

      const mine = await fetch(`${rest.server.url}/outputs/${id}/stdout`, { headers: bearer(ALICE) });
      expect(mine.status).toBe(200);
      expect(mine.headers.get("content-type")).toMatch(/^text\/plain/);
      const text = await mine.text();
      expect(text).toHaveLength(150004);
      expect(text.endsWith("TAIL")).toBe(true);
      expectError(await api(`/outputs/${id}/stdout`, { headers: bearer(BOB) }), 404, "OUTPUT_NOT_FOUND");
      expectError(await api(`/outputs/${id}/other`, { headers: bearer(ALICE) }), 404, "OUTPUT_NOT_FOUND");
      expectError(await api(`/outputs/${"A".repeat(24)}/stdout`, { headers: bearer(ALICE) }), 404, "OUTPUT_NOT_FOUND");
      expect((await api(`/outputs/${id}/stdout`)).status).toBe(401);

      const alice = await mcpClient(ALICE);
      const bob = await mcpClient(BOB);
      try {
        const templates = await alice.listResourceTemplates();
        expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain("sandgate://outputs/{id}/{stream}");
        const read = await alice.readResource({ uri });
        expect((read.contents[0] as { text: string }).text).toBe(text);
        await expect(bob.readResource({ uri })).rejects.toThrow(/no saved output/);
      } finally {
        await alice.close();
        await bob.close();
      }
    }
  });
});
