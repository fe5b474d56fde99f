// Idle keep-alive connections outlast the time the server advertises, so a client reusing one
// at the end of that time (undici's clock runs slow on a busy host) is answered, not reset.

import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../server-helpers.js";

const server = useTestServer({ pool: { python: 0, javascript: 0, bash: 0 } });

/** Sends one GET on the socket and resolves with the raw response head. */
function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer): void => {
      text += chunk.toString("latin1");
      const head = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (head !== -1 && length !== undefined && text.length >= head + 4 + Number(length)) {
        socket.off("data", onData).off("end", closed).off("close", closed);
        resolve(text.slice(0, head));
      }
    };
    socket.on("data", onData);
    const closed = (): void => reject(new Error(`the server closed the connection before answering ${path}`));
    if (socket.readableEnded || socket.destroyed) return closed();
    socket.once("end", closed).once("close", closed);
    socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\n`);
  });
}

describe("keep-alive", () => {
  it("a connection idle a second past the advertised keep-alive time still carries the next request", async () => {
    const { port } = server.server;
    const socket = connect(port, "127.0.0.1");
    try {
      await new Promise<void>((resolve) => socket.once("connect", resolve));
      const first = await get(socket, "/health");
      expect(first).toMatch(/^HTTP\/1\.1 200/);
      expect(first).toMatch(/\r\nkeep-alive: timeout=5(\r\n|$)/i);
      await new Promise((resolve) => setTimeout(resolve, 6000));
      expect(await get(socket, "/health")).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      socket.destroy();
    }
  });
});
