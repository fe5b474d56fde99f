import { describe, expect, it } from "vitest";
import { Slots } from "../src/sandbox/slots.js";

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
});
