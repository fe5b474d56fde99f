// An upload path ending in "/" names a directory, through the real server: a multipart part after
// a path field "dir/" lands under its own file name there, and a raw PUT to "dir/" is refused
// instead of writing a file called "dir".

import { afterEach, describe, expect, it } from "vitest";
import { expectError, useTestServer } from "../server-helpers.js";

const f = useTestServer({ pool: { python: 1, javascript: 0, bash: 0 } });
const opened: string[] = [];
afterEach(async () => {
  for (const id of opened.splice(0)) await f.api(`/sessions/${id}`, { method: "DELETE" });
});

async function newSession(): Promise<string> {
  const reply = await f.api<{ session_id: string }>("/sessions", { json: {} });
  opened.push(reply.body.session_id);
  return reply.body.session_id;
}

async function entries(id: string, path: string): Promise<Record<string, string>> {
  const reply = await f.api<{ entries: { name: string; type: string }[] }>(`/sessions/${id}/files?path=${encodeURIComponent(path)}`);
  expect(reply.status).toBe(200);
  return Object.fromEntries(reply.body.entries.map((e) => [e.name, e.type]));
}

describe("upload paths ending in a slash", () => {
  it("puts a multipart file part after a path field ending in / under its file name in that directory", async () => {
    const id = await newSession();
    const form = new FormData();
    form.append("path", "reports/");
    form.append("file", new Blob(["a,b\n1,2\n"]), "q1.csv");
    const res = await fetch(`${f.server.url}/sessions/${id}/files`, { method: "POST", body: form });
    const body = (await res.json()) as { files: { path: string }[] };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.files.map((x) => x.path)).toEqual(["/workspace/reports/q1.csv"]);
    expect(await entries(id, "/workspace")).toEqual({ reports: "directory" });
    expect(await entries(id, "reports")).toEqual({ "q1.csv": "file" });
  });

  it("refuses a raw upload to a path ending in / and writes nothing", async () => {
    const id = await newSession();
    const res = await f.api(`/sessions/${id}/files/content?path=${encodeURIComponent("reports/")}`, {
      method: "PUT",
      raw: "data",
      headers: { "content-type": "application/octet-stream" },
    });
    expectError(res, 400, "NOT_A_FILE");
    expect(await entries(id, "/workspace")).toEqual({});
  });
});
