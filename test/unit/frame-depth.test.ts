// A runner frame nested deeper than any answer shows is cut before JSON.parse builds it, so a
// hand-written frame of millions of brackets costs the server milliseconds, not its event loop.

import { describe, expect, it } from "vitest";
import { cutTooDeep, MAX_FRAME_DEPTH } from "../../src/sandbox/frame-depth.js";

const deep = (n: number, inner = "1"): string => "[".repeat(n) + inner + "]".repeat(n);
const cut = (text: string, max?: number): string => cutTooDeep(Buffer.from(text), max).toString("utf8");

function depthOf(value: unknown): number {
  let depth = 0;
  for (let v: unknown = value; typeof v === "object" && v !== null; v = Array.isArray(v) ? (v as unknown[])[0] : Object.values(v)[0]) depth++;
  return depth;
}

describe("cutTooDeep", () => {
  it("leaves a frame within the limit as it is", () => {
    const text = JSON.stringify({ type: "result", value: JSON.parse(deep(MAX_FRAME_DEPTH - 1)) });
    expect(cut(text)).toBe(text);
  });

  it("replaces what opens deeper than the limit with null, keeping the frame's fields", () => {
    const parsed = JSON.parse(cut(`{"type":"result","id":"r1","value":${deep(5, '{"a":[1]}')},"after":2}`, 3)) as Record<string, unknown>;
    expect(parsed).toEqual({ type: "result", id: "r1", value: [[null]], after: 2 });
  });

  it("does not count brackets or escaped quotes inside strings", () => {
    const text = JSON.stringify({ s: `${"[".repeat(50)} \\" \\\\"`, v: [["]]]]\"[[["]] });
    expect(cut(text, 3)).toBe(text);
  });

  it("keeps text that is not JSON not JSON", () => {
    expect(() => {
      JSON.parse(cut("[".repeat(5000), 10));
    }).toThrow();
  });

  it("makes a value 2,000,000 deep cheap to parse and still deeper than any answer shows", () => {
    const body = Buffer.from(`{"type":"result","value":${deep(2_000_000, "")}}`);
    const cutBody = cutTooDeep(body);
    // JSON.parse of the whole body takes about 700 ms on an idle host; of this, a few.
    expect(cutBody.length).toBeLessThan(4 * MAX_FRAME_DEPTH);
    const parsed = JSON.parse(cutBody.toString("utf8")) as { value: unknown };
    expect(depthOf(parsed.value)).toBe(MAX_FRAME_DEPTH - 1);
  });
});
