// A REST result that says state_reset also says why, as the MCP text does: a program a REST client
// runs can tell "my variables are gone because the run was killed" from "the shell was exited".

import { describe, expect, it } from "vitest";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ env: { MAX_MEMORY_MB: "128" }, pool: { python: 0, javascript: 0, bash: 0 } });

interface Result {
  status: string;
  state_reset?: boolean;
  state_reset_reason?: string;
}

describe("state_reset over REST", () => {
  it("a session call killed for memory says state_reset with the reason, and the next call keeps no reason", async () => {
    const session = await f.api<{ session_id: string }>("/sessions", { json: {} });
    const id = session.body.session_id;
    const bomb = await f.api<Result>("/execute", {
      json: { language: "python", session_id: id, code: "x = 1\nb = bytearray(400 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1" },
    });
    expect(bomb.body).toMatchObject({ status: "memory_limit", state_reset: true });
    expect(bomb.body.state_reset_reason).toMatch(/killed in this call \(memory_limit\).*variables and imports are gone/);
    const next = await f.api<Result>("/execute", { json: { language: "python", session_id: id, code: "1" } });
    expect(next.body.status).toBe("ok");
    expect(next.body.state_reset).toBeUndefined();
    expect(next.body.state_reset_reason).toBeUndefined();
  }, 60_000);

  it("a Bash session whose code exits the shell says state_reset with a reason naming that", async () => {
    const session = await f.api<{ session_id: string }>("/sessions", { json: {} });
    const exited = await f.api<Result>("/execute", { json: { language: "bash", session_id: session.body.session_id, code: "X=1; exit 3" } });
    expect(exited.body.state_reset).toBe(true);
    expect(exited.body.state_reset_reason).toMatch(/the code exited it/);
  }, 30_000);
});
