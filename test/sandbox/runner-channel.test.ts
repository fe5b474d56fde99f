// The runner channels through the engine, in real sandboxes: each runner's wire carries only its
// own messages, and a message that belongs to the other channel cannot wreck a session.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("the Bash pipe channel", () => {
  it("leaves a tool_call frame that Bash code writes on the runner's frame pipe unanswered, so the session's next call still runs", async () => {
    const session = t.engine.sessions.create();
    try {
      // __sg_send is the runner's own frame writer; user code shares its shell and can call it.
      const first = await t.engine.execute({
        language: "bash",
        sessionId: session.id,
        code: `__sg_send '{"type":"tool_call","callId":"c1","tool":"demo.echo","args":{"words":"a b c"}}'; echo sent`,
      });
      expect(first.status).toBe("ok");
      const second = await t.engine.execute({ language: "bash", sessionId: session.id, timeoutS: 5, code: "echo still here" });
      expect(second.status).toBe("ok");
      expect(second.stdout).toBe("still here\n");
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });
});
