// A long secret given in env (tens of KB, as env allows) is masked like a short one, through the
// real server: the result, the streamed output of a background job and the session's later calls,
// and the server keeps answering (a mask built as one regular expression was too large for it).

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

/** A secret of `length` characters in two long runs, as base64 of a mostly empty file has ("AAAA..."). */
function longSecret(length: number, letter: string): string {
  const half = Math.floor(length / 2);
  return letter.repeat(half) + "Z".repeat(length - half);
}

interface Result {
  status: string;
  stdout: string;
  job_id?: string;
}

describe("env masking of a long secret", () => {
  it("masks a 40 KB secret in a result and the server goes on answering", async () => {
    const secret = longSecret(40_000, "A");
    await withServer(fx, {}, async (_server, api) => {
      const reply = await api<Result>("/execute", { json: { language: "python", env: { API_TOKEN: secret }, code: "import os\nprint(os.environ['API_TOKEN'])" } });
      expect(reply.status).toBe(200);
      expect(reply.body.stdout).toBe("[masked:API_TOKEN]\n");
      const next = await api<Result>("/execute", { json: { language: "python", code: "print('still here')" } });
      expect(next.body.stdout).toBe("still here\n");
    });
  });

  it("masks long secrets a session remembers in a later call and in a background job's streamed output", async () => {
    const secrets = [longSecret(30_000, "B"), longSecret(30_000, "C"), longSecret(30_000, "D")];
    await withServer(fx, {}, async (_server, api) => {
      const session = await api<{ session_id: string }>("/sessions", { json: {} });
      const id = session.body.session_id;
      try {
        for (const [i, secret] of secrets.entries()) {
          const set = await api<Result>("/execute", { json: { language: "python", session_id: id, env: { [`TOKEN_${i}`]: secret }, code: `import os\nkept_${i} = os.environ['TOKEN_${i}']` } });
          expect(set.body.status).toBe("ok");
        }
        // Printed in pieces of 1000 characters, flushed one by one, by a job: the stream must hold each secret back until it is whole.
        const code = "import sys\nfor s in (kept_0, kept_1, kept_2):\n    for i in range(0, len(s), 1000):\n        sys.stdout.write(s[i:i + 1000]); sys.stdout.flush()\n    print()";
        const started = await api<Result>("/execute", { json: { language: "python", session_id: id, background: true, code } });
        expect(started.body.job_id).toMatch(/^job_/);
        const streamed = await (await fetch(`${_server.url}/jobs/${started.body.job_id!}/output/stdout`)).text();
        expect(streamed).toBe("[masked:TOKEN_0]\n[masked:TOKEN_1]\n[masked:TOKEN_2]\n");
        const job = await api<{ status: string; result: Result }>(`/jobs/${started.body.job_id!}`);
        expect(job.body.status).toBe("done");
        expect(job.body.result.stdout).toBe("[masked:TOKEN_0]\n[masked:TOKEN_1]\n[masked:TOKEN_2]\n");
      } finally {
        await api(`/sessions/${id}`, { method: "DELETE" });
      }
    });
  });
});

describe("secrets a session remembers", () => {
  it("keeps masking the session's own secret after later calls brought many long secrets of their own", async () => {
    const own = longSecret(200, "S");
    const id = fx.engine.sessions.create("long-secrets", undefined, { env: { OWN_TOKEN: own } }).id;
    try {
      // Five calls of 60 KB of secrets each: more than the session remembers, and it forgets the oldest.
      for (const letter of ["E", "F", "G", "H", "I"]) {
        const result = await fx.engine.execute({ language: "python", sessionId: id, env: { CALL_TOKEN: longSecret(60_000, letter) }, code: "1" });
        expect(result.status).toBe("ok");
      }
      const result = await fx.engine.execute({ language: "python", sessionId: id, code: "import os\nprint(os.environ['OWN_TOKEN'])" });
      expect(result.stdout).toBe("[masked:OWN_TOKEN]\n");
    } finally {
      await fx.engine.sessions.stop(id);
    }
  });
});
