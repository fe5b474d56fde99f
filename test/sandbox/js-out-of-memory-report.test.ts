// A JavaScript run out of heap shows the code's own stderr and V8's one FATAL ERROR line, not
// the 2 KB report of GC traces and native stack frames that names the node binary's host path.

import { describe, expect, it } from "vitest";
import { trimV8FatalReport } from "../../src/execution/v8-fatal-report.js";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 1, bash: 0 });

const REPORT = [
  "",
  "<--- Last few GCs --->",
  "",
  "[2:0x6710cd0]     2365 ms: Mark-Compact 193.8 (226.6) -> 193.8 (226.4) MB, 55.89 / 0.00 ms  (average mu = 0.782) allocation failure",
  "",
  "",
  "<--- JS stacktrace --->",
  "",
  "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
  "----- Native stack trace -----",
  "",
  " 1: 0xb78db3 node::OOMErrorHandler(char const*, v8::OOMDetails const&) [/opt/host/bin/node]",
  "16: 0x195e476  [/opt/host/bin/node]",
  "",
].join("\n");

describe("V8's out-of-memory report", () => {
  it("is cut to its FATAL ERROR line after what the code wrote", () => {
    expect(trimV8FatalReport(`loading rows\n${REPORT}`)).toBe("loading rows\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
    expect(trimV8FatalReport(REPORT)).toBe("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  });

  it("leaves stderr without such a report as it is", () => {
    for (const text of ["", "plain error\n", "<--- Last few GCs --->\n but no fatal line\n"]) expect(trimV8FatalReport(text)).toBe(text);
  });

  it("is not in the result of a real JavaScript run that runs out of heap", async () => {
    const r = await t.engine.execute({ language: "javascript", code: "console.error('filling'); const a = []; while (true) a.push(new Array(1e6).fill(1.5));" });
    expect(r.status).toBe("memory_limit");
    expect(r.stderr).toBe("filling\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  });
});
