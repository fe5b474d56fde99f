// `sandgate serve` stopped by SIGTERM while file transfers are stuck (readers that take nothing,
// transfers waiting for a place): the process exits within a bounded time and leaves no helper.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { hostProcessesMatching, waitFor } from "../helpers.js";
import { startServe } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-stop-"));
// Sandboxes run as an unprivileged host user when tests run as root; it must reach the state dirs.
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raw connection from loopback address `from` that sends `head` and then reads nothing. */
function stalled(port: number, from: string, head: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress: from }, () => {
      socket.write(head);
      socket.pause();
      resolve(socket);
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}

it("exits within seconds of SIGTERM while downloads are stalled and others wait for a place, leaving no helper", async () => {
  const state = join(dir, "state");
  const serve = await startServe({
    SANDBOX_DIR: state,
    SANDGATE_POOL: "python=0,javascript=0,bash=1",
    SANDGATE_MAX_FILE_MB: "512",
    SANDGATE_MAX_WORKSPACE_MB: "1024",
  });
  const sockets: Socket[] = [];
  try {
    const made = (await (
      await fetch(`${serve.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "bash", session_id: "stuck", code: "truncate -s 300M big.bin" }) })
    ).json()) as { status: string };
    expect(made.status).toBe("ok");
    const port = Number(new URL(serve.url).port);
    const path = "/sessions/stuck/files/content?path=big.bin";
    // HEAD requests first (they took a place each for good before), then 20 stalled downloads.
    for (let i = 0; i < 20; i++) expect((await fetch(`${serve.url}${path}`, { method: "HEAD" })).status).toBe(200);
    for (let i = 0; i < 20; i++) sockets.push(await stalled(port, "127.0.0.1", `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    expect(await waitFor(() => hostProcessesMatching(state).length > 0, 10_000)).toBe(true);
    const started = Date.now();
    const code = await Promise.race([serve.stop(), new Promise<string>((resolve) => setTimeout(() => resolve("still running after 30 s"), 30_000))]);
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await waitFor(() => hostProcessesMatching(state).length === 0, 10_000)).toBe(true);
  } finally {
    for (const s of sockets) s.destroy();
    serve.child.kill("SIGKILL");
  }
}, 120_000);
