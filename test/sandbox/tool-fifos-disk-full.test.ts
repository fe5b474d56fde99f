// The disk that holds SANDBOX_DIR full (workspaces, saved outputs): sandboxes still start on the tool
// FIFO pairs made ahead, a start that needs a new pair fails with a SandgateError saying what to free,
// and once there is room again pairs are made ahead as before, with none left behind.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandgateError } from "../../src/errors/index.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { useRawRuntime } from "../fixtures/runtime.js";

const raw = useRawRuntime("fifos-disk-full");
let channels: string;

/** Creates files until the file system has no inode left; returns the directory holding them. */
function fill(): string {
  const filler = join(channels, "filler");
  mkdirSync(filler, { recursive: true });
  try {
    for (let i = 0; ; i++) writeFileSync(join(filler, String(i)), "");
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
  }
  return filler;
}

/** Directories of FIFO pairs under the channels directory, once the batch being made is done (the count holds still). */
async function pairs(): Promise<string[]> {
  const list = (): string[] => readdirSync(channels).filter((name) => name.startsWith("tool-") && existsSync(join(channels, name, "replies")));
  let names = list();
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = list();
    if (now.length === names.length && now.length > 0) break;
    names = now;
  }
  return list();
}

const hasPipes = async (sandbox: Sandbox): Promise<string> =>
  (await sandbox.run({ code: "test -p /sandgate/channel/tool-requests && echo pipes", filename: "main.sh", timeoutMs: 10_000, outputCapBytes: 1 << 16 })).stdout.toString();

// Mounting the small file system that stands for the full disk needs root.
describe.runIf(process.getuid?.() === 0)("tool FIFOs when the disk of SANDBOX_DIR is full", () => {
  beforeAll(() => {
    // A file system of its own with few inodes, where the FIFO pairs are made.
    channels = join(raw.runtime.etcDir, "..", "channels");
    mkdirSync(channels, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m,nr_inodes=200,mode=0711", "tmpfs", channels]);
  });

  afterAll(() => {
    if (channels) execFileSync("umount", ["-l", channels]);
  });

  it("start on the pairs made ahead, refuse the next start with advice, and are made ahead again once there is room", async () => {
    const first = await raw.start("bash");
    await first.dispose();
    // A batch made ahead (one mkfifo for many pairs), at least a few.
    const stock = (await pairs()).length;
    expect(stock).toBeGreaterThanOrEqual(4);

    const filler = fill();
    const started: Sandbox[] = [];
    for (let i = 0; i < stock; i++) started.push(await raw.start("bash"));
    for (const sandbox of started) expect(await hasPipes(sandbox)).toBe("pipes\n");
    const refused = await raw.start("bash").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandgateError);
    expect((refused as SandgateError).code).toBe("SANDBOX_FAILED");
    expect((refused as SandgateError).message).toBe("could not make the tool FIFOs of a new sandbox (ENOSPC): free space and inodes on the disk of SANDBOX_DIR");
    await Promise.all(started.map((sandbox) => sandbox.dispose()));

    rmSync(filler, { recursive: true, force: true });
    const after = await raw.start("bash");
    expect(await hasPipes(after)).toBe("pipes\n");
    await after.dispose();
    // A stock again, and nothing a failed start took left behind: every directory holds a pair.
    const again = await pairs();
    expect(again.length).toBeGreaterThanOrEqual(4);
    expect(readdirSync(channels).sort()).toEqual(again.sort());
  }, 60_000);
});
