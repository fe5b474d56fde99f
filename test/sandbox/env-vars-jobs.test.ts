// Environment variables in background jobs, in real sandboxes: a job sees its call's and its
// session's variables, and a secret among them is masked in the job's polled output and result.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const SECRET = "xoxb-1234567890-abcdefghijkl";
const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

describe("environment variables in background jobs", () => {
  it("refuses a job with session_env but no session when it is started, as the call would be refused", () => {
    let error: unknown;
    try {
      fx.engine.jobs.start({ language: "python", sessionEnv: { REGION: "eu" }, code: "1" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: "INVALID_INPUT", data: { field: "session_env" } });
    expect(fx.engine.jobs.list()).toEqual([]);
  });

  it("reach the job's code, and its secret, written in two pieces, is masked in the polled output, the followed output and the result", async () => {
    const id = fx.engine.sessions.create("jobs-env", undefined, { env: { REGION: "eu" } }).id;
    try {
      const job = fx.engine.jobs.start({
        language: "python",
        sessionId: id,
        env: { SLACK_TOKEN: SECRET },
        code: "import os, sys, time\nt = os.environ['SLACK_TOKEN']\nsys.stdout.write(os.environ['REGION'] + ' ' + t[:8])\nsys.stdout.flush()\ntime.sleep(0.3)\nprint(t[8:])\nprint(t, file=sys.stderr)\nt",
      });
      const followed: string[] = [];
      for await (const text of fx.engine.jobs.follow(job.id, "stdout")) followed.push(text);
      const done = await fx.engine.jobs.get(job.id, undefined, { waitMs: 10_000 });
      expect(done.status).toBe("done");
      const everything = JSON.stringify(done) + followed.join("");
      expect(everything).not.toContain(SECRET);
      expect(done.stdout).toBe("eu [masked:SLACK_TOKEN]\n");
      expect(followed.join("")).toBe(done.stdout);
      expect(done.result?.value).toBe("[masked:SLACK_TOKEN]");
      expect(done.result?.stderr).toBe("[masked:SLACK_TOKEN]\n");
    } finally {
      await fx.engine.sessions.stop(id);
    }
  });
});
