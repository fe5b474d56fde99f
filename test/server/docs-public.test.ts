// The API's docs on a server with keys: /docs and /openapi.json are readable without a key (they
// hold no secret), the document passes the checks an OpenAPI linter makes, every operation has an
// example, and OAuth probes get 404 by any method rather than a 401 that starts an OAuth flow.

import { describe, expect, it } from "vitest";
import { rawRequest, useTestServer } from "../server-helpers.js";

const KEY = "docs-key-0123456789abcdef";
const keyed = useTestServer({ pool: { python: 0, javascript: 0, bash: 0 }, server: { apiKeys: { admin: KEY } } });

type Operation = Record<string, unknown> & {
  operationId?: string;
  security?: unknown[];
  requestBody?: { description?: string; content: Record<string, Record<string, unknown>> };
  responses: Record<string, { content?: Record<string, Record<string, unknown>> }>;
  "x-codeSamples"?: Array<{ source: string }>;
};
type Document = { servers?: Array<{ url: string }>; paths: Record<string, Record<string, Operation>> };

const MEDIA_TYPE_KEYS = new Set(["schema", "example", "examples", "encoding"]);

describe("docs on a server with API keys", () => {
  it("GET /docs is a page a browser shows without a key, with a curl example per operation", async () => {
    const page = await rawRequest(`${keyed.server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    const text = page.text.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)));
    expect(text).toContain('curl -s -H "Authorization: Bearer $SANDGATE_API_KEY" -H \'content-type: application/json\' -d \'{"language":"python"');
    expect(page.text).not.toContain(KEY);
  });

  it("GET /openapi.json answers without a key, and other routes still need one", async () => {
    expect((await rawRequest(`${keyed.server.url}/openapi.json`)).status).toBe(200);
    expect((await rawRequest(`${keyed.server.url}/sessions`)).status).toBe(401);
  });

  it("GET / and /health, the operations declared public, answer a probe without a key; the other status routes need one, and the document says which", async () => {
    for (const path of ["/", "/health"]) expect((await rawRequest(`${keyed.server.url}${path}`)).status, path).toBe(200);
    for (const path of ["/languages", "/security/policy"]) expect((await rawRequest(`${keyed.server.url}${path}`)).status, path).toBe(401);
    // A public path takes no other method without a key.
    expect((await rawRequest(`${keyed.server.url}/health`, { method: "POST" })).status).toBe(401);
    const doc = (await rawRequest(`${keyed.server.url}/openapi.json`)).json as Document;
    const open = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([, op]) => op.security?.length === 0).map(([method]) => `${method} ${path}`));
    expect(open.sort()).toEqual(["get /", "get /health"]);
    expect(doc.paths["/health"]?.get?.["x-sandgate-scope"]).toBe("public");
    expect(doc.paths["/languages"]?.get?.["x-sandgate-scope"]).toBe("any");
  });

  it("the document has servers, media types without stray keys, and an operation id and security on every operation", async () => {
    const doc = (await rawRequest(`${keyed.server.url}/openapi.json`)).json as Document;
    expect(doc.servers?.length).toBeGreaterThan(0);
    const ids: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[A-Za-z0-9]+$/);
        ids.push(op.operationId ?? "");
        expect(Array.isArray(op.security), `${where} states its security`).toBe(true);
        const media = [...Object.values(op.requestBody?.content ?? {}), ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {}))];
        for (const m of media) expect(Object.keys(m).filter((k) => !MEDIA_TYPE_KEYS.has(k)), where).toEqual([]);
        expect(op["x-codeSamples"]?.[0]?.source, where).toMatch(/^curl /);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths["/mcp"]?.post?.security).toEqual([{ bearerAuth: [] }]);
  });

  it("every JSON request body has an example holding the fields its schema requires", async () => {
    const doc = (await rawRequest(`${keyed.server.url}/openapi.json`)).json as Document;
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const json = op.requestBody?.content["application/json"];
        if (!json) continue;
        expect(json.example, `${method} ${path}`).toBeDefined();
        if (path === "/mcp") continue;
        const schema = json.schema as { required?: string[]; properties?: Record<string, { enum?: unknown[] }> };
        const example = json.example as Record<string, unknown>;
        for (const field of schema.required ?? []) expect(example, `${method} ${path}`).toHaveProperty(field);
        for (const [field, value] of Object.entries(example)) {
          expect(schema.properties, `${method} ${path}`).toHaveProperty(field);
          const allowed = schema.properties?.[field]?.enum;
          if (allowed !== undefined) expect(allowed, `${method} ${path} ${field}`).toContain(value);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it.each([
    ["HEAD", "/.well-known/oauth-protected-resource"],
    ["POST", "/.well-known/oauth-authorization-server"],
    ["POST", "/register"],
    ["POST", "/token"],
    ["GET", "/authorize"],
    ["GET", "/mcp/.well-known/oauth-protected-resource"],
  ])("%s %s answers 404 without a WWW-Authenticate challenge, even with a wrong key", async (method, path) => {
    for (const headers of [{}, { authorization: "Bearer not-the-key" }] as Array<Record<string, string>>) {
      const reply = await rawRequest(`${keyed.server.url}${path}`, { method, headers });
      expect(reply.status).toBe(404);
      expect(reply.headers["www-authenticate"]).toBeUndefined();
    }
  });
});
