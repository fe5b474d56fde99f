// Jobs of an anonymous caller that is gone for good (its MCP session ended) are dropped, finished
// ones included: nobody can read them any more, and each may hold its result's output and images
// until its TTL. Real sandboxes through the engine.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "./helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 1 });

describe("jobs of a caller gone for good", () => {
  it("are all dropped, finished and running alike, once stopOwnedBy has stopped them", async () => {
    const owner = "mcp:gone-caller";
    const finished = fx.engine.jobs.start({ owner, command: "echo done" });
    const running = fx.engine.jobs.start({ owner, command: "sleep 876502" });
    const other = fx.engine.jobs.start({ owner: "mcp:still-here", command: "echo mine" });
    let read = await fx.engine.jobs.get(finished.id, owner, { waitMs: 20_000 });
    while (read.status === "running") read = await fx.engine.jobs.get(finished.id, owner, { waitMs: 20_000, since: read.next });
    expect(read.status).toBe("done");
    await fx.engine.jobs.stopOwnedBy(owner, "its MCP session ended");
    expect(fx.engine.jobs.list(owner)).toEqual([]);
    await expect(fx.engine.jobs.get(running.id, owner)).rejects.toMatchObject({ code: "JOB_NOT_FOUND" });
    expect(fx.engine.jobs.list("mcp:still-here").map((j) => j.id)).toEqual([other.id]);
  });
});
