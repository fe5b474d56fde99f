// Finished background jobs hold their results for a while; only the latest few of one caller
// keep their images, so a caller cannot pile up images in the server's memory job after job.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>';

it("keeps the images of a caller's 4 latest finished jobs and says what older results dropped", async () => {
  t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const job = t.engine.jobs.start({ language: "javascript", code: `sandgate.show(${JSON.stringify(SVG)}); ${i}`, owner: "alice" });
    ids.push(job.id);
    let snapshot = await t.engine.jobs.get(job.id, "alice", { waitMs: 10_000 });
    while (snapshot.status === "running") snapshot = await t.engine.jobs.get(job.id, "alice", { waitMs: 10_000, since: snapshot.next });
    expect(snapshot.result?.images).toHaveLength(1);
  }
  const results = await Promise.all(ids.map(async (id) => (await t!.engine.jobs.get(id, "alice")).result));
  for (const old of results.slice(0, 2)) {
    expect(old?.images).toBeUndefined();
    expect(old?.imagesNote).toMatch(/1 image dropped when newer jobs finished/);
    expect(old?.status).toBe("ok");
  }
  for (const recent of results.slice(2)) expect(recent?.images).toEqual([{ mime: "image/svg+xml", dataBase64: Buffer.from(SVG).toString("base64") }]);
});
