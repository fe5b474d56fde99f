// The admission queue and the host-path scrubber on their own: who is served in what order,
// when a waiter is refused, and what a message with host paths turns into.

import { describe, expect, it } from "vitest";
import { publicError, registerHostPaths, SandgateError, scrubHostPaths } from "../../src/errors/index.js";
import { Admission, type Lease } from "../../src/execution/admission.js";

describe("admission", () => {
  it("serves owners round-robin and one owner's calls in order", async () => {
    const admission = new Admission({ maxSandboxes: 1, maxCommittedMb: 1024, waitMs: 10_000 });
    const first = await admission.acquire(100, "A");
    const order: string[] = [];
    const wait = (owner: string, n: number): Promise<void> =>
      admission.acquire(100, owner).then((lease: Lease) => {
        order.push(`${owner}${n}`);
        lease.release();
      });
    const all = [wait("A", 1), wait("A", 2), wait("A", 3), wait("B", 1), wait("C", 1), wait("B", 2)];
    expect(admission.state().waiting).toBe(6);
    first.release();
    await Promise.all(all);
    expect(order).toEqual(["A1", "B1", "C1", "A2", "B2", "A3"]);
    expect(admission.state()).toMatchObject({ sandboxes: 0, committedMb: 0, waiting: 0 });
  });

  it("an owner at its share waits for one of its own sandboxes and holds nobody else up", async () => {
    const admission = new Admission({ maxSandboxes: 4, maxPerOwner: 2, maxCommittedMb: 1024, waitMs: 10_000, expectedWaitS: () => 42 });
    const a1 = await admission.acquire(100, "A");
    await admission.acquire(100, "A");
    const order: string[] = [];
    const third = admission.acquire(100, "A").then((lease) => {
      order.push("A3");
      return lease;
    });
    // A waits although two sandboxes are free; B is served at once past A's waiting call.
    const b = await admission.acquire(100, "B");
    order.push("B1");
    expect(admission.heldBy("A")).toBe(2);
    a1.release();
    (await third).release();
    expect(order).toEqual(["B1", "A3"]);
    b.release();
    const refused = new Admission({ maxSandboxes: 2, maxPerOwner: 1, maxCommittedMb: 1024, waitMs: 10, expectedWaitS: () => 42 });
    await refused.acquire(100, "A");
    await expect(refused.acquire(100, "A")).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS", data: { retry_after: 42, maxSandboxesPerCaller: 1 } });
  });

  it("counts memory as well as sandboxes, and a release wakes the next waiter", async () => {
    const admission = new Admission({ maxSandboxes: 10, maxCommittedMb: 512, waitMs: 10_000 });
    const a = await admission.acquire(256, "A");
    const b = await admission.acquire(256, "A");
    let granted = false;
    const c = admission.acquire(256, "B").then((lease) => {
      granted = true;
      return lease;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(granted).toBe(false);
    a.release();
    a.release(); // idempotent
    (await c).release();
    b.release();
    expect(admission.state()).toMatchObject({ sandboxes: 0, committedMb: 0 });
  });

  it("refuses a waiter after waitMs with TOO_MANY_REQUESTS and a retry time, and spares never jump the queue", async () => {
    const admission = new Admission({ maxSandboxes: 1, maxCommittedMb: 1024, waitMs: 50 });
    const held = await admission.acquire(100, "A");
    const refused = admission.acquire(100, "B");
    expect(admission.tryReserve(100)).toBeUndefined();
    await expect(refused).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS", data: { retry_after: 1, maxSandboxes: 1 } });
    held.release();
    expect(admission.tryReserve(100)).toBeDefined();
    // Where a spare would fit beside a bigger call that waits, it still does not go first.
    const roomy = new Admission({ maxSandboxes: 10, maxCommittedMb: 1024, waitMs: 50 });
    const small = await roomy.acquire(200, "A");
    const big = roomy.acquire(900, "B");
    expect(roomy.tryReserve(100)).toBeUndefined();
    await expect(big).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
    expect(roomy.tryReserve(100)).toBeDefined();
    small.release();
  });

  it("a cancelled waiter leaves the queue and close() refuses everyone left", async () => {
    const admission = new Admission({ maxSandboxes: 1, maxCommittedMb: 1024, waitMs: 10_000 });
    await admission.acquire(100, "A");
    const controller = new AbortController();
    const cancelled = admission.acquire(100, "B", controller.signal);
    const shut = admission.acquire(100, "C");
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
    expect(admission.state().waiting).toBe(1);
    admission.close();
    await expect(shut).rejects.toMatchObject({ code: "SHUTTING_DOWN" });
  });
});

describe("host paths in errors", () => {
  it("replaces registered directories by what the sandbox sees, longest first, and only whole path components", () => {
    const forget = registerHostPaths([
      { hostPath: "/srv/sg-test/workspaces", shownAs: "/workspace", perEntry: true },
      { hostPath: "/srv/sg-test", shownAs: "<sandbox dir>" },
      { hostPath: "/data/sets", shownAs: "/mnt/sets" },
    ]);
    try {
      expect(scrubHostPaths("ENOENT: open '/srv/sg-test/workspaces/abc-123/x/y.txt'")).toBe("ENOENT: open '/workspace/x/y.txt'");
      expect(scrubHostPaths("bwrap: Can't find source path /srv/sg-test/workspaces/s1-ab12: No such file")).toBe("bwrap: Can't find source path /workspace: No such file");
      expect(scrubHostPaths("mkdir /srv/sg-test/outputs/1 failed")).toBe("mkdir <sandbox dir>/outputs/1 failed");
      expect(scrubHostPaths("bwrap: Can't find source path /data/sets: No such file")).toBe("bwrap: Can't find source path /mnt/sets: No such file");
      expect(scrubHostPaths("/srv/sg-test2/other and /data/setsX")).toBe("/srv/sg-test2/other and /data/setsX");
      const error = publicError(new SandgateError("SANDBOX_FAILED", "at /data/sets/a", { data: { path: "/srv/sg-test/workspaces/s1/f" } }));
      expect(error.message).toBe("at /mnt/sets/a");
      expect(error.data).toEqual({ path: "/workspace/f" });
    } finally {
      forget();
    }
    expect(scrubHostPaths("/data/sets/a")).toBe("/data/sets/a");
  });

  it("turns anything but a SandgateError into INTERNAL with a reference, logging the original", () => {
    const logged: Array<Record<string, unknown>> = [];
    const error = publicError(new Error("EACCES: permission denied, open '/etc/shadow'"), { error: (detail) => void logged.push(detail) });
    expect(error.code).toBe("INTERNAL");
    expect(error.message).not.toContain("/etc/shadow");
    expect(error.message).toContain(String(error.data.ref));
    expect(logged[0]?.ref).toBe(error.data.ref);
  });
});
