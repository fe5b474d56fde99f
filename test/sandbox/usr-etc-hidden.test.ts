// /usr/etc (npm's global npmrc when Node's prefix is /usr; it may hold registry tokens) is hidden
// inside sandboxes like /usr/local/etc, while the rest of /usr stays visible.

import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
const hostHas = existsSync("/usr/etc") && readdirSync("/usr/etc").length > 0;

describe.skipIf(!hostHas)("the host's /usr/etc", () => {
  it("is an empty read-only directory inside a sandbox while the rest of /usr stays visible", async () => {
    const result = await t.engine.executeCommand({
      command: "ls -A /usr/etc | wc -l; touch /usr/etc/x 2>/dev/null && echo writable || echo read-only; ls /usr/bin/env >/dev/null && echo usr-visible",
      timeoutS: 15,
    });
    expect(result.stdout.trim().split("\n")).toEqual(["0", "read-only", "usr-visible"]);
  });
});
