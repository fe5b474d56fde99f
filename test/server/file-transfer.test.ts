// REST file transfers through the real server on port 0 and real sandboxes: raw and multipart
// uploads streamed to the workspace, streamed downloads, caps, quotas, aborts and planted links.

import { createHash, randomBytes } from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { hostProcessesMatching, waitFor } from "../helpers.js";
import { expectError, useTestServer, type Api, type RestFixture } from "../server-helpers.js";

const MIB = 1024 * 1024;
const sha = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A download as bytes (fetch, no Accept header: what curl or a browser gets). */
async function download(url: string, headers: Record<string, string> = {}): Promise<RawReply> {
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: Object.fromEntries(res.headers), body };
}

async function put(base: string, path: string, body: Uint8Array, type = "application/octet-stream"): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}/files/content?path=${encodeURIComponent(path)}`, { method: "PUT", headers: { "content-type": type }, body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Every name in the workspace, hidden ones and those in subdirectories included, as sandbox code sees them. */
async function workspaceNames(api: Api, id: string): Promise<string[]> {
  const r = await api<{ status: string; value: string[] }>("/execute", {
    json: { language: "python", session_id: id, code: "import os\nsorted(os.path.relpath(os.path.join(d, n), '/workspace') for d, ds, fs in os.walk('/workspace') for n in ds + fs)" },
  });
  expect(r.body.status).toBe("ok");
  return r.body.value;
}

/** Upload helpers of this server still alive (bubblewrap started with a /proc for the helper). */
function uploadHelpers(): number[] {
  return hostProcessesMatching("fs_helper").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("--proc");
    } catch {
      return false;
    }
  });
}

function useFiles(env: Record<string, string>): RestFixture {
  const f = useTestServer({ env: { SANDGATE_MAX_UPLOAD_MB: "12", SANDGATE_MAX_WORKSPACE_MB: "16", ...env }, pool: { python: 1, javascript: 0, bash: 1 } });
  // Each test's sessions end with it (a caller may hold 8).
  afterEach(async () => {
    const live = await f.api<{ sessions: { session_id: string }[] }>("/sessions");
    for (const s of live.body.sessions) await f.api(`/sessions/${encodeURIComponent(s.session_id)}`, { method: "DELETE" });
  });
  return f;
}

describe("REST uploads and downloads", () => {
  const f = useFiles({});
  const base = (id: string): string => `${f.server.url}/sessions/${id}`;

  it("a 5 MB raw upload lands byte-exact, code sees it, and the streamed download gives the same bytes", async () => {
    const data = randomBytes(5 * MIB);
    const up = await put(base("raw"), "data/blob.bin", data);
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    expect(up.json).toEqual({ path: "/workspace/data/blob.bin", size: data.length, created: true });
    const seen = await f.api<{ value: string }>("/execute", {
      json: { language: "python", session_id: "raw", code: "import hashlib\nhashlib.sha256(open('data/blob.bin','rb').read()).hexdigest()" },
    });
    expect(seen.body.value).toBe(sha(data));
    const got = await download(`${base("raw")}/files/content?path=data/blob.bin`);
    expect(got.status).toBe(200);
    expect(got.headers["content-length"]).toBe(String(data.length));
    expect(got.headers["content-type"]).toBe("application/octet-stream");
    expect(got.headers["x-content-type-options"]).toBe("nosniff");
    expect(got.headers["content-disposition"]).toMatch(/^attachment/);
    expect(sha(got.body)).toBe(sha(data));
    // Replacing it keeps nothing of the old content and leaves no temporary name.
    const again = await put(base("raw"), "data/blob.bin", Buffer.from("short"));
    expect(again.json).toMatchObject({ size: 5, created: false });
    expect((await download(`${base("raw")}/files/content?path=data/blob.bin`)).body.toString()).toBe("short");
    expect(await workspaceNames(f.api, "raw")).toEqual(["data", "data/blob.bin"]);
  });

  it("keeps today's JSON answers: a JSON body writes, and encoding or Accept: application/json reads as JSON", async () => {
    const put1 = await f.api(`/sessions/json/files/content`, { method: "PUT", json: { path: "a.txt", content: "hi" } });
    expect(put1.body).toMatchObject({ path: "/workspace/a.txt", size: 2, created: true });
    // Without ?path= the body is the JSON form whatever its declared type (curl -d says form-urlencoded).
    const asForm = await fetch(`${base("json")}/files/content`, {
      method: "PUT",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ path: "b.txt", content: "form" }),
    });
    expect(await asForm.json()).toMatchObject({ path: "/workspace/b.txt", size: 4, created: true });
    const byAccept = await f.api(`/sessions/json/files/content?path=a.txt`, { headers: { accept: "application/json" } });
    expect(byAccept.body).toEqual({ path: "/workspace/a.txt", content: "hi", encoding: "utf8", size: 2 });
    const byEncoding = await f.api(`/sessions/json/files/content?path=a.txt&encoding=base64`);
    expect(byEncoding.body).toMatchObject({ content: Buffer.from("hi").toString("base64"), encoding: "base64" });
    const raw = await download(`${base("json")}/files/content?path=a.txt`);
    expect(raw.body.toString()).toBe("hi");
    expect(raw.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(raw.headers["content-disposition"]).toMatch(/^inline/);
  });

  it("sends what a browser could run as an attachment, never as inline HTML", async () => {
    await put(base("html"), "page.html", Buffer.from("<script>alert(1)</script>"), "text/html");
    const got = await download(`${base("html")}/files/content?path=page.html`);
    expect(got.headers["content-disposition"]).toMatch(/^attachment; filename\*=UTF-8''page\.html$/);
    expect(got.headers["x-content-type-options"]).toBe("nosniff");
    expect(got.headers["content-security-policy"]).toMatch(/sandbox/);
  });

  it("a multipart upload writes each file part: to the path field before it, else to its name under ?dir=", async () => {
    const one = randomBytes(300 * 1024);
    const two = Buffer.from("x,y\n1,2\n");
    const form = new FormData();
    form.append("path", "models/weights.bin");
    form.append("file", new Blob([one]), "ignored-name.bin");
    form.append("file", new Blob([two]), "table.csv");
    const res = await fetch(`${base("multi")}/files?dir=inbox`, { method: "POST", body: form });
    const body = (await res.json()) as { files: unknown[] };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.files).toEqual([
      { path: "/workspace/models/weights.bin", size: one.length, created: true },
      { path: "/workspace/inbox/table.csv", size: two.length, created: true },
    ]);
    expect(sha((await download(`${base("multi")}/files/content?path=models/weights.bin`)).body)).toBe(sha(one));
    expect((await download(`${base("multi")}/files/content?path=inbox/table.csv`)).body.equals(two)).toBe(true);
    expect(await workspaceNames(f.api, "multi")).toEqual(["inbox", "inbox/table.csv", "models", "models/weights.bin"]);
  });

  it("an upload over the cap is 413 FILE_TOO_LARGE and leaves nothing, with or without Content-Length", async () => {
    const big = randomBytes(13 * MIB);
    const declared = await put(base("cap"), "big.bin", big);
    expect(declared.status).toBe(413);
    expect((declared.json.error as { code: string; message: string }).code).toBe("FILE_TOO_LARGE");
    expect((declared.json.error as { message: string }).message).toMatch(/12 MB upload limit.*SANDGATE_MAX_UPLOAD_MB/);
    // Chunked, so the size is only known by counting as it streams.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < big.length; at += MIB) controller.enqueue(big.subarray(at, at + MIB));
        controller.close();
      },
    });
    const res = await fetch(`${base("cap")}/files/content?path=dir/big.bin`, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: stream, duplex: "half" });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
    expect(await workspaceNames(f.api, "cap")).toEqual([]);
  });

  it("a client that drops the connection mid-upload leaves no file, no temporary file and no helper", async () => {
    const url = new URL(`${base("abort")}/files/content?path=half/part.bin`);
    await new Promise<void>((resolve) => {
      const req = httpRequest(url, { method: "PUT", headers: { "content-type": "application/octet-stream", "content-length": String(8 * MIB) } });
      req.on("error", () => resolve());
      req.write(randomBytes(2 * MIB), () => setTimeout(() => {
        req.destroy();
        resolve();
      }, 300));
    });
    expect(await waitFor(() => uploadHelpers().length === 0, 10_000)).toBe(true);
    expect(await workspaceNames(f.api, "abort")).toEqual([]);
  });

  it("a client that drops a download part-way stops its helper", async () => {
    await put(base("dl-abort"), "big.bin", randomBytes(8 * MIB));
    const before = hostProcessesMatching("fs_helper").length;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(new URL(`${base("dl-abort")}/files/content?path=big.bin`), (res) => {
        expect(res.statusCode).toBe(200);
        res.once("data", () => {
          // One chunk in: the helper is there, then the client goes.
          expect(hostProcessesMatching("fs_helper").length).toBeGreaterThan(before);
          req.destroy();
          resolve();
        });
      });
      req.on("error", reject);
      req.end();
    });
    expect(await waitFor(() => hostProcessesMatching("fs_helper").length <= before, 10_000)).toBe(true);
  });

  it("one caller has at most 4 transfers at once: a fifth is 429 with Retry-After, and the slots come back", async () => {
    const held = [0, 1, 2, 3].map(
      (i) =>
        new Promise<ReturnType<typeof httpRequest>>((resolve) => {
          const req = httpRequest(new URL(`${base(`slow${i}`)}/files/content?path=s.bin`), { method: "PUT", headers: { "content-type": "application/octet-stream", "content-length": String(MIB) } });
          req.on("error", () => undefined);
          req.write(Buffer.alloc(1024), () => resolve(req));
        }),
    );
    const requests = await Promise.all(held);
    try {
      expect(await waitFor(() => uploadHelpers().length >= 4, 10_000)).toBe(true);
      const fifth = await fetch(`${base("slow4")}/files/content?path=t.bin`, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: "x" });
      expect(fifth.status).toBe(429);
      expect(fifth.headers.get("retry-after")).toBe("1");
      expect(((await fifth.json()) as { error: { code: string } }).error.code).toBe("TOO_MANY_REQUESTS");
    } finally {
      for (const req of requests) req.destroy();
    }
    expect(await waitFor(() => uploadHelpers().length === 0, 10_000)).toBe(true);
    expect((await put(base("slow4"), "t.bin", Buffer.from("x"))).status).toBe(200);
  });

  it("uploads never write through links sandbox code planted, to a file, /proc or a directory outside", async () => {
    const before = readFileSync("/etc/passwd");
    const plant = await f.api<{ status: string }>("/execute", {
      json: { language: "bash", session_id: "links", code: "ln -s /etc/passwd x && ln -s /proc/self/environ p && ln -s /etc d && ln -s /etc/sandgate-new n" },
    });
    expect(plant.body.status).toBe("ok");
    for (const path of ["x", "p", "d/evil", "n", "/workspace/d/passwd"]) {
      const res = await put(base("links"), path, Buffer.from("owned\n"));
      expect(res.status, `${path}: ${JSON.stringify(res.json)}`).toBe(400);
      expect((res.json.error as { code: string }).code).toBe("PATH_INVALID");
    }
    expect(readFileSync("/etc/passwd").equals(before)).toBe(true);
    expect(existsSync("/etc/evil") || existsSync("/etc/sandgate-new")).toBe(false);
    // Downloads through the same links fail cleanly, and say nothing of the host.
    for (const path of ["x", "d/passwd", "p"]) expectError(await f.api(`/sessions/links/files/content?path=${path}`), 400, "PATH_INVALID");
  });

  it("a download of a FIFO or a directory is refused at once, never waits on it", async () => {
    await f.api("/execute", { json: { language: "bash", session_id: "fifo", code: "mkfifo pipe && mkdir sub" } });
    expect(expectError(await f.api("/sessions/fifo/files/content?path=pipe"), 400, "NOT_A_FILE").message).toMatch(/special file/);
    expectError(await f.api("/sessions/fifo/files/content?path=sub"), 400, "NOT_A_FILE");
    expectError(await f.api("/sessions/fifo/files/content?path=none.bin"), 404, "FILE_NOT_FOUND");
  });

  it("MCP file_read of a PNG returns image content the agent can see; other binaries a blob resource; a large one a pointer to the download", async () => {
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), randomBytes(2000)]);
    await put(base("mcp"), "plot.png", png);
    const call = (path: string) =>
      f.api<{ result: { content: Array<Record<string, unknown>>; structuredContent: Record<string, unknown>; isError?: boolean } }>("/mcp/execute", {
        json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "file_read", arguments: { session_id: "mcp", path } } },
      });
    const small = await call("plot.png");
    expect(small.status).toBe(200);
    const image = small.body.result.content.find((c) => c.type === "image") as { mimeType: string; data: string } | undefined;
    expect(image?.mimeType).toBe("image/png");
    expect(Buffer.from(image?.data ?? "", "base64").equals(png)).toBe(true);
    expect(small.body.result.content[0]?.text).toMatch(/plot\.png is an image \(image\/png, 2016 bytes\), sent as image content/);
    // The bytes go once: the structured result names the image without repeating it.
    expect(small.body.result.structuredContent).toMatchObject({ content: "", encoding: "base64", size: png.length });

    // The type is what the bytes say: a JPEG under another name is a JPEG; random bytes named .png are a blob.
    const jpeg = Buffer.concat([Buffer.from("ffd8ffe0", "hex"), randomBytes(500)]);
    await put(base("mcp"), "photo.dat", jpeg);
    expect((await call("photo.dat")).body.result.content.find((c) => c.type === "image")).toMatchObject({ mimeType: "image/jpeg" });
    const fake = Buffer.concat([Buffer.from([0xff, 0x00]), randomBytes(500)]);
    await put(base("mcp"), "fake.png", fake);
    const blob = await call("fake.png");
    expect(blob.body.result.content.map((c) => c.type)).toEqual(["text", "resource"]);
    const resource = blob.body.result.content.find((c) => c.type === "resource") as { resource: { uri: string; mimeType: string; blob: string } } | undefined;
    expect(resource?.resource).toMatchObject({ uri: "file:///workspace/fake.png", mimeType: "image/png" });
    expect(Buffer.from(resource?.resource.blob ?? "", "base64").equals(fake)).toBe(true);

    // An image too large to send inline is a pointer to the download, as any large binary.
    await put(base("mcp"), "huge.png", Buffer.concat([png.subarray(0, 16), randomBytes(2 * MIB)]));
    expect((await call("huge.png")).body.result.content.map((c) => c.type)).toEqual(["text"]);
    await put(base("mcp"), "big.dat", randomBytes(2 * MIB));
    const large = await call("big.dat");
    expect(large.body.result.isError).toBeUndefined();
    expect(large.body.result.content).toHaveLength(1);
    expect(large.body.result.content[0]?.text).toMatch(/binary file .* 2097152 bytes.*GET \/sessions\/mcp\/files\/content\?path=big\.dat/);
  });
});

describe.each([
  ["its own filesystem", {}],
  ["a plain directory", { SANDGATE_WORKSPACE_FS: "directory" }],
])("an upload that fills a workspace that is %s", (_name, env) => {
  const f = useFiles(env);

  it("is refused with 413 WORKSPACE_FULL naming the limit, and leaves nothing partial", async () => {
    const keep = randomBytes(6 * MIB);
    const base = `${f.server.url}/sessions/quota`;
    expect((await put(base, "keep.bin", keep)).status).toBe(200);
    const over = await put(base, "new/over.bin", randomBytes(11 * MIB));
    expect(over.status, JSON.stringify(over.json)).toBe(413);
    const error = over.json.error as { code: string; message: string };
    expect(error.code).toBe("WORKSPACE_FULL");
    expect(error.message).toMatch(/16 MB \(limits\.maxWorkspaceMb\)/);
    expect(await workspaceNames(f.api, "quota")).toEqual(["keep.bin"]);
    expect(sha((await download(`${base}/files/content?path=keep.bin`)).body)).toBe(sha(keep));
  });
});
