// Channels by which tool data could reach the agent untokenized through a real sandbox and a real
// PII-enabled upstream: an exception class named from tool data, text files in UTF-16 and UTF-32.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { echo, usePiiStack } from "../fixtures/pii-stack.js";

const stack = usePiiStack({ name: "pii-enc", maxExecutionS: 20 });
let client: Client;

beforeAll(async () => {
  ({ client } = await connectMcp(stack.server.url, { name: "pii-encodings-test" }));
});

afterAll(async () => {
  await client?.close();
});

const execute = (code: string, sessionId?: string): Promise<Record<string, unknown>> => stack.execute(code, sessionId ? { sessionId } : {});

/** What file_read hands over for `path`: its text, or its blob decoded from base64. */
async function fileRead(sessionId: string, path: string): Promise<{ wire: string; bytes: Buffer }> {
  const read = await callTool(client, "file_read", { session_id: sessionId, path });
  const wire = JSON.stringify(read);
  const structured = read.structuredContent as { content: string; encoding: string };
  return { wire, bytes: structured.encoding === "base64" ? Buffer.from(structured.content, "base64") : Buffer.from(structured.content, "utf8") };
}

describe("tool data in other shapes than the output", () => {
  it("an exception class the code named from a tool result shows a token as the error's type", async () => {
    const email = "tess.type@example.com";
    const body = await execute(`${echo(email)}\nraise type(r[6:], (Exception,), {})("boom")`);
    expect(body.status).toBe("error");
    expect(JSON.stringify(body)).not.toContain(email);
    expect((body.error as { type: string }).type).toMatch(/^\[EMAIL_\d+\]$/);
  });

  it.each([
    ["utf-16", "utf16le", Buffer.from([0xff, 0xfe])],
    ["utf-16-le", "utf16le", Buffer.alloc(0)],
    ["utf-16-be", "utf16be", Buffer.alloc(0)],
    ["utf-32", "utf32le", Buffer.from([0xff, 0xfe, 0, 0])],
  ] as const)("file_read and the REST download of a file written as %s from a tool result hold tokens, in the same encoding", async (python, encoding, bom) => {
    const email = "ula.wide@example.com";
    const session = `enc-${python}`;
    const code = `${echo(email)}\nopen("/workspace/export.csv", "w", encoding="${python}").write("name;mail\\nRené;" + r[6:] + "\\n")`;
    // Without API keys an MCP client and a REST client are two callers: each writes its own session's file.
    await callTool(client, "execute_code", { language: "python", code, session_id: session });
    await execute(code, session);
    const expected = Buffer.concat([bom, encode("name;mail\nRené;[EMAIL_1]\n", encoding)]);
    const read = await fileRead(session, "export.csv");
    expect(read.wire).not.toContain(email);
    expect(read.bytes.equals(expected)).toBe(true);
    const res = await fetch(`${stack.server.url}/sessions/${session}/files/content?path=export.csv`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
    await fetch(`${stack.server.url}/sessions/${session}`, { method: "DELETE" });
    await callTool(client, "stop_session", { session_id: session });
  });

  it("a binary file with NUL bytes that is not UTF-16 still downloads as it is", async () => {
    const email = "vic.bin@example.com";
    await execute(`${echo(email)}\nopen("/workspace/b.dat", "wb").write(bytes([0, 0, 0, 7, 1, 0, 0, 0]) * 10 + r.encode())`, "enc-bin");
    const res = await fetch(`${stack.server.url}/sessions/enc-bin/files/content?path=b.dat`);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 8).equals(Buffer.from([0, 0, 0, 7, 1, 0, 0, 0]))).toBe(true);
    expect(bytes.length).toBe(80 + Buffer.byteLength(`Echo: ${email}`));
    await fetch(`${stack.server.url}/sessions/enc-bin`, { method: "DELETE" });
  });
});

function encode(text: string, encoding: "utf16le" | "utf16be" | "utf32le"): Buffer {
  if (encoding === "utf16le") return Buffer.from(text, "utf16le");
  if (encoding === "utf16be") return Buffer.from(text, "utf16le").swap16();
  const out = Buffer.alloc([...text].length * 4);
  [...text].forEach((c, i) => out.writeUInt32LE(c.codePointAt(0)!, i * 4));
  return out;
}
