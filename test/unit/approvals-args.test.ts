// What a person approving a tool call reads of its arguments: a view in which every field shows
// up with its value cut per field, whatever padding comes first, and a digest of what will be sent.

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argsDigest, argumentsView, canonicalJson } from "../../src/features/governance/index.js";

const PAD = "x".repeat(5000);

describe("the arguments view of an approval", () => {
  it("shows a field that comes after 5,000 characters of padding, with the padding cut and counted", () => {
    const view = argumentsView({ note: PAD, to: "attacker@example.com" });
    const lines = view.text.split("\n");
    expect(lines).toContain('to: "attacker@example.com"');
    expect(lines.find((l) => l.startsWith("note: "))).toMatch(/^note: "x{160}" … 4840 more characters$/);
    expect(lines[0]).toMatch(/^NOT ALL SHOWN: 1 value\(s\) cut/);
    expect(view.text.length).toBeLessThan(1000);
  });

  it("lists every top-level field before nested padding takes the room", () => {
    const nested = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, "innocent"]));
    const view = argumentsView({ body: nested, to: "attacker@example.com", path: "/etc/shadow" });
    const lines = view.text.split("\n");
    expect(lines).toContain('to: "attacker@example.com"');
    expect(lines).toContain('path: "/etc/shadow"');
    expect(lines.some((l) => /^body: … \d+ more fields not shown$/.test(l))).toBe(true);
    expect(lines.length).toBeLessThanOrEqual(101);
    expect(view.omittedFields).toBeGreaterThan(200);
  });

  it("says how many fields it leaves out when there are more than fit, and shows nested keys by path", () => {
    const many = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f${i}`, i]));
    const view = argumentsView({ ...many, to: "attacker@example.com" });
    expect(view.text.split("\n")[0]).toMatch(/^NOT ALL SHOWN: .*52 field\(s\) left out; read them whole with GET \/approvals/);
    expect(view.text).toContain("… 52 more fields not shown");
    expect(argumentsView({ mail: { to: ["a@b.c", "attacker@example.com"], subject: "hi" } }).text.split("\n")).toEqual([
      "every field in full:",
      'mail.to[0]: "a@b.c"',
      'mail.to[1]: "attacker@example.com"',
      'mail.subject: "hi"',
    ]);
  });

  it("cuts a 5,000-character key and keeps each line one line whatever the values hold", () => {
    const view = argumentsView({ [`k${PAD}`]: "v", "a\nb": "line\nbreak\u2028", to: "attacker@example.com" });
    const lines = view.text.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/^\["kx{79}" … 4921 more characters\]: "v"$/);
    expect(lines[2]).toBe('["a\\nb"]: "line\\nbreak\u2028"');
    expect(lines[3]).toBe('to: "attacker@example.com"');
  });

  it("keeps a line of a value nested 500 levels deep short, its last key in view", () => {
    let deep: Record<string, unknown> = { to: "attacker@example.com" };
    for (let i = 0; i < 500; i++) deep = { [`level${i}`]: deep };
    const lines = argumentsView({ ...deep, cc: "x" }).text.split("\n");
    expect(lines[0]).toMatch(/^NOT ALL SHOWN/);
    expect(lines.find((l) => l.startsWith("level499."))).toMatch(/…\(\d+ characters of path\)….*\.to: "attacker@example\.com"$/);
    expect(lines.every((l) => l.length < 600)).toBe(true);
    expect(lines).toContain('cc: "x"');
  });

  it("digests the arguments whatever the order of their keys", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    expect(argsDigest({ b: 1, a: 2 })).toBe(argsDigest({ a: 2, b: 1 }));
    expect(argsDigest({ a: 2, b: 1 })).toBe(createHash("sha256").update('{"a":2,"b":1}').digest("hex"));
    expect(argsDigest({ a: 2, b: 1 })).not.toBe(argsDigest({ a: 2, b: 2 }));
  });
});
