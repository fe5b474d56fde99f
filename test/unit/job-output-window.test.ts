// A background job's live output window: whatever the sizes of the chunks it arrives in, exactly the
// last windowChars characters of each stream can be read, under the same offsets, and the end keeps
// exactly the last keepChars of them (checked against the whole text kept aside).

import { describe, expect, it } from "vitest";
import { JobOutput } from "../../src/execution/job-output.js";

const WINDOW = 40;

/** What reading `whole` from `since` must give when only its last `window` characters are kept. */
function expected(whole: string, window: number, since: number, maxChars: number): { text: string; from: number; next: number; skipped: number; more: boolean } {
  const first = Math.max(0, whole.length - window);
  const from = Math.min(Math.max(since, first), whole.length);
  const text = whole.slice(from, from + maxChars);
  const next = from + text.length;
  return { text, from, next, skipped: Math.max(0, Math.min(from, first) - since), more: next < whole.length };
}

describe("a job's output window", () => {
  it("gives exactly the last window of each stream, under absolute offsets, after every chunk of any size", () => {
    const output = new JobOutput(WINDOW);
    const whole = { stdout: "", stderr: "" };
    let n = 0;
    // Chunk sizes from 1 to past the window, so that text is dropped both a little and a lot at a time.
    for (const size of [1, 1, 3, 7, 1, 2, 13, 1, 1, 1, 29, 41, 1, 5, 90, 1, 1, 2, 3, 11, 17, 1, 1, 1, 1, 1, 1, 8]) {
      for (const stream of ["stdout", "stderr"] as const) {
        let chunk = "";
        for (let i = 0; i < size; i++) chunk += String.fromCharCode(97 + (n++ % 26));
        output.append(stream, chunk);
        whole[stream] += chunk;
        expect(output.endOf(stream)).toBe(whole[stream].length);
        for (const since of [0, whole[stream].length - WINDOW - 1, whole[stream].length - WINDOW, whole[stream].length - 3, whole[stream].length, whole[stream].length + 5]) {
          for (const maxChars of [Infinity, 4]) expect(output.read(stream, Math.max(0, since), maxChars)).toEqual(expected(whole[stream], WINDOW, Math.max(0, since), maxChars));
        }
      }
    }
  });

  it("keeps exactly the last keepChars of the window when it ends", () => {
    const output = new JobOutput(WINDOW);
    let whole = "";
    for (let i = 0; i < 57; i++) {
      output.append("stdout", `${i % 10}`);
      whole += `${i % 10}`;
    }
    output.append("stderr", "short");
    output.end(15);
    expect(output.done).toBe(true);
    expect(output.read("stdout")).toEqual(expected(whole, 15, 0, Infinity));
    expect(output.read("stderr")).toEqual(expected("short", 15, 0, Infinity));
    output.append("stdout", "late");
    expect(output.endOf("stdout")).toBe(whole.length);
  });
});
