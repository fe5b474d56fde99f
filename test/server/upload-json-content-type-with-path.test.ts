// A PUT of file content with ?path= and Content-Type application/json (a client uploading a .json
// file's bytes) gets one error that says how to send them, not "body field path: Required", and
// writes nothing; the JSON form without ?path= and a raw upload of the same bytes still work
// (a real server on port 0, real sandboxes).

import { expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";
import { expectError, withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

it("a JSON-typed body with ?path= is refused with how to upload a file's bytes, and nothing is written", async () => {
  await withServer(fx, {}, async (server, api) => {
    const url = `${server.url}/sessions/json-up/files/content`;
    const bytes = JSON.stringify({ rows: [1, 2, 3] });
    const refused = await fetch(`${url}?path=data.json`, { method: "PUT", headers: { "content-type": "application/json" }, body: bytes });
    expect(refused.status).toBe(400);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("send them with another Content-Type, e.g. application/octet-stream");
    expect(error.message).not.toContain("Required");
    // The refused upload started no session, and a read starts none.
    expectError(await api("/sessions/json-up/files/content?path=data.json&encoding=utf8"), 404, "SESSION_NOT_FOUND");

    const raw = await fetch(`${url}?path=data.json`, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: bytes });
    expect(raw.status).toBe(200);
    const json = await fetch(url, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ path: "b.txt", content: "hi" }) });
    expect(json.status).toBe(200);
    const back = await api<{ content: string }>("/sessions/json-up/files/content?path=data.json&encoding=utf8");
    expect(back.body.content).toBe(bytes);
  });
});
