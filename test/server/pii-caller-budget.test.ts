// The PII vault budget per caller, through a real server with two API keys and a real PII-enabled
// upstream: one key filling its vaults leaves the server-wide room to the others.

import { describe, expect, it } from "vitest";
import { usePiiStack } from "../fixtures/pii-stack.js";

const FLOODER = "flooder-key-0123456789abcdef";
const OTHER = "other-key-0123456789abcdef0";

// A server-wide room of 8 values, 5 per caller: the same shares as the defaults, scaled down.
const stack = usePiiStack({ name: "pii-budget", maxExecutionS: 20, pii: { maxTotalValues: 8, maxCallerValues: 5 }, apiKeys: { flooder: FLOODER, other: OTHER } });

const execute = async (key: string, code: string, sessionId: string): Promise<{ status: string; stdout: string }> =>
  (await stack.execute(code, { key, sessionId })) as { status: string; stdout: string };

/** Code that learns `n` emails of `who` from tool results, one per call, and prints them. */
const learn = (who: string, n: number): string =>
  `for i in range(${n}):\n    r = await call_mcp_tool("everything.echo", {"message": f"${who}{i}@example.com"})\n    print(r)`;

describe("PII vault budgets per caller", () => {
  it("one key filling its vaults leaves the others' personal data tokenized, and their tokens go back to tools", async () => {
    // The flooder in two sessions: 5 values tokenized, then its own budget is spent.
    const a = await execute(FLOODER, learn("flood", 4), "f1");
    const b = await execute(FLOODER, learn("more", 4), "f2");
    expect(a.stdout).toBe([1, 2, 3, 4].map((n) => `Echo: [EMAIL_${n}]\n`).join(""));
    expect(b.stdout).toBe("Echo: [EMAIL_1]\n" + "Echo: [EMAIL_REDACTED]\n".repeat(3));
    // The other key still has room: tokens, and a token passed back reaches the tool as the value.
    const other = await execute(OTHER, `${learn("ann", 2)}\nr = await call_mcp_tool("everything.echo", {"message": "[EMAIL_2]"})\nprint(r == "Echo: ann1@example.com")`, "o1");
    expect(other.stdout).toBe("Echo: [EMAIL_1]\nEcho: [EMAIL_2]\nTrue\n");
    // Its session ended, the flooder has room again.
    await fetch(`${stack.server.url}/sessions/f1`, { method: "DELETE", headers: { authorization: `Bearer ${FLOODER}` } });
    const c = await execute(FLOODER, learn("again", 1), "f3");
    expect(c.stdout).toBe("Echo: [EMAIL_1]\n");
  });
});
