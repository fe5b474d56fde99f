// A file transfer whose helper sandbox cannot even be launched gives its server-wide transfer
// place back: a run of such failures must not leave later downloads waiting forever.

import { existsSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString("utf8");
}

it("gives the transfer place back when the helper cannot be launched, so later downloads still run", async () => {
  t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const { id } = t.engine.sessions.create("transfers");
  await t.engine.files.write(id, "note.txt", "hello");
  const runtimeDir = join(t.dir, "runtime");
  const seccomp = readdirSync(runtimeDir).map((name) => join(runtimeDir, name)).find((path) => path.endsWith("seccomp.bpf"));
  expect(seccomp, "the seccomp program the helpers are launched with").toBeDefined();
  renameSync(seccomp!, `${seccomp}.away`);
  // More failed launches than there are transfer places server-wide (16).
  for (let i = 0; i < 20; i++) await expect(t.engine.files.download(id, "note.txt", { timeoutMs: 10_000 })).rejects.toThrow();
  renameSync(`${seccomp}.away`, seccomp!);
  expect(existsSync(seccomp!)).toBe(true);
  const file = await Promise.race([
    t.engine.files.download(id, "note.txt", { timeoutMs: 10_000 }),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the download waited for a transfer place that never came back")), 10_000)),
  ]);
  expect(await readAll(file.body)).toBe("hello");
});
