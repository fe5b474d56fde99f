// A failure on the host while it handles what a sandbox sends (here: a library caller's onOutput
// that throws) stops that sandbox and ends its call with the reason; the process keeps serving.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("ends the call as killed with the reason when handling its output throws, and the engine keeps serving", async () => {
  t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const onOutput = (): void => {
    throw new Error("consumer broke");
  };
  const broken = await t.engine.execute({ language: "python", code: "print('hello', flush=True)\nimport time; time.sleep(5)", onOutput });
  expect(broken.status).toBe("killed");
  expect(broken.error?.message).toMatch(/sandgate failed while handling what the sandbox sent \(consumer broke\)/);
  const after = await t.engine.execute({ language: "python", code: "6 * 7" });
  expect(after).toMatchObject({ status: "ok", value: 42 });
});
