// A key is checked for the route's scope before its input is: probing a route it may not use with
// malformed input is refused with FORBIDDEN and recorded as an auth failure, never answered as INVALID_INPUT.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT, startApprovalStack, type ApprovalStack } from "../fixtures/approval-stack.js";
import { bearer, expectError } from "../server-helpers.js";

let stack: ApprovalStack;
beforeAll(async () => {
  stack = await startApprovalStack(() => ({}));
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe("scopes before input", () => {
  it("a key without the admin scope that posts a malformed decision gets 403 and an auth_failure event", async () => {
    stack.events.length = 0;
    for (const json of [{ approve: "yes" }, { nothing: 1 }]) {
      expectError(await stack.api("/approvals/not-a-real-id", { json, headers: bearer(AGENT) }), 403, "FORBIDDEN");
    }
    // Refusals are tallied per caller and reason over a window: the first is a row of its own.
    const failures = stack.events.filter((e) => e.kind === "auth_failure");
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures[0]).toMatchObject({ client: "key:agent", reason: "missing_scope", scope: "admin" });
  });
});
