import { describe, expect, it } from "vitest";
import { Slots } from "../../src/sandbox/slots.js";

describe("file helper slots", () => {
  it("never let a newcomer slip in while a freed place passes to the caller already waiting", async () => {
    const slots = new Slots(2);
    const first = await slots.acquire();
    await slots.acquire();
    const order: string[] = [];
    const waiter = slots.acquire().then((release) => {
      order.push("waiter");
      return release;
    });
    first();
    // Arrives after the place was freed but before the waiter has run.
    const newcomer = slots.acquire().then((release) => {
      order.push("newcomer");
      return release;
    });
    expect(slots.inUse).toBe(2);
    const releaseWaiter = await waiter;
    await Promise.resolve();
    expect(order).toEqual(["waiter"]);
    expect(slots.inUse).toBe(2);
    releaseWaiter();
    await newcomer;
    expect(order).toEqual(["waiter", "newcomer"]);
    expect(slots.inUse).toBe(2);
  });

  it("end a wait at its time limit with the caller's error, and the place goes to the next waiter, not the one that left", async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const late = slots.acquire({ timeoutMs: 20, timeoutError: () => new Error("no place within 20 ms") });
    const patient = slots.acquire();
    await expect(late).rejects.toThrow("no place within 20 ms");
    held();
    held(); // a second release gives nothing back twice
    const release = await patient;
    expect(slots.inUse).toBe(1);
    release();
    expect(slots.inUse).toBe(0);
  });

  it("end a wait when its signal aborts, taking no place", async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const controller = new AbortController();
    const waiting = slots.acquire({ signal: controller.signal });
    controller.abort(new Error("the client went away"));
    await expect(waiting).rejects.toThrow("the client went away");
    held();
    expect(slots.inUse).toBe(0);
  });
});
