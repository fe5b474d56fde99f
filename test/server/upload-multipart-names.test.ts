// Multipart file names in RFC 5987 form (filename*=UTF-8''...), as urllib3 1.x (Python requests)
// sends a non-ASCII name, are decoded, through the real server: the file lands under its real
// name instead of the part being refused as an unknown form field.

import { afterEach, describe, expect, it } from "vitest";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ pool: { python: 0, javascript: 0, bash: 1 } });
const opened: string[] = [];
afterEach(async () => {
  for (const id of opened.splice(0)) await f.api(`/sessions/${id}`, { method: "DELETE" });
});

async function upload(disposition: string): Promise<{ status: number; body: { files?: { path: string }[]; error?: { code: string } } }> {
  const session = await f.api<{ session_id: string }>("/sessions", { json: {} });
  opened.push(session.body.session_id);
  const body = `--XYZ\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XYZ--\r\n`;
  const res = await fetch(`${f.server.url}/sessions/${session.body.session_id}/files`, {
    method: "POST",
    headers: { "content-type": "multipart/form-data; boundary=XYZ" },
    body,
  });
  return { status: res.status, body: (await res.json()) as { files?: { path: string }[] } };
}

describe("multipart file names in RFC 5987 form", () => {
  it("decodes filename*=UTF-8''... into the file's name", async () => {
    const reply = await upload(`name="file"; filename*=UTF-8''r%C3%A9sum%C3%A9%20v2.txt`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.files?.map((x) => x.path)).toEqual(["/workspace/résumé v2.txt"]);
  });

  it("prefers filename* to a plain filename sent with it", async () => {
    const reply = await upload(`name="file"; filename="resume.txt"; filename*=utf-8'en'%E2%82%AC.txt`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.files?.map((x) => x.path)).toEqual(["/workspace/€.txt"]);
  });

  it("still refuses a path escape spelled in filename*", async () => {
    const reply = await upload(`name="file"; filename*=UTF-8''..%2F..%2Fescape.txt`);
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe("PATH_INVALID");
  });
});
