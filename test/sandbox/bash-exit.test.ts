// A Bash session whose shell exits (`exit N`) reports the reset on that call, and its next call
// runs in a new shell at once instead of failing on the one that is going away.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("runs the next call of a Bash session in a fresh shell right after the shell exits", async () => {
  t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const { id } = t.engine.sessions.create("exits");
  for (let round = 0; round < 5; round++) {
    const set = await t.engine.execute({ language: "bash", sessionId: id, code: `MARK=${round}; echo set` });
    expect(set).toMatchObject({ status: "ok", stdout: "set\n" });
    const exited = await t.engine.execute({ language: "bash", sessionId: id, code: "echo bye; exit 3" });
    expect(exited).toMatchObject({ status: "error", exitCode: 3, stdout: "bye\n", stateReset: true });
    // Straight after: the old shell may still be ending, but the call must not land in it.
    const next = await t.engine.execute({ language: "bash", sessionId: id, code: 'echo "mark=${MARK-unset}"' });
    expect(next, `round ${round}`).toMatchObject({ status: "ok", stdout: "mark=unset\n" });
  }
});
