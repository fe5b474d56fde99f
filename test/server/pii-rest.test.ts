// POST /pii/tokenize through the real server on port 0: the text tokenized, entities in code points,
// one vault per request, the config's kinds and patterns, and refusals that name what is wrong.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { createTestEngine, type TestEngine } from "../helpers.js";
import { bearer, expectError, jsonApi, serverContext, type Api } from "../server-helpers.js";

interface Tokenized {
  text: string;
  entities: { type: string; token: string; start: number; end: number }[];
}

let fx: TestEngine;
let server: RunningServer;
let api: Api;

beforeAll(async () => {
  fx = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const pii = { ...fx.config.pii, types: ["email", "phone", "employee_id"], patterns: [{ name: "employee_id", regex: "\\bEMP-\\d{6}\\b" }] };
  server = await startHttpServer(serverContext(fx.engine, { ...fx.config, pii }, { maxBodyBytes: 64 * 1024 }));
  api = jsonApi(() => server.url);
});
afterAll(async () => {
  await server?.close();
  await fx?.close();
});

describe("POST /pii/tokenize", () => {
  it("answers the text with tokens and each entity's place in code points, the same value with the same token", async () => {
    const text = "👋 EMP-004211 is ann@example.com; call (415) 555-2671 or write ann@example.com";
    const r = await api<Tokenized>("/pii/tokenize", { json: { text } });
    expect(r.status).toBe(200);
    expect(r.body.text).toBe("👋 [EMPLOYEE_ID_1] is [EMAIL_1]; call [PHONE_1] or write [EMAIL_1]");
    const points = [...text];
    for (const e of r.body.entities) expect(points.slice(e.start, e.end).join("")).toMatch(/^(EMP-004211|ann@example\.com|\(415\) 555-2671)$/);
    expect(r.body.entities.map((e) => [e.type, e.token, e.start])).toEqual([
      ["employee_id", "[EMPLOYEE_ID_1]", 2],
      ["email", "[EMAIL_1]", 16],
      ["phone", "[PHONE_1]", 38],
      ["email", "[EMAIL_1]", 62],
    ]);
  });

  it("tokenizes the shapes third-party data prints: national phone numbers, generated IBANs, IPs in URLs, 14-digit Diners cards", async () => {
    const text = "Büro 030 12345678, portable 07 81 23 45 67; IBAN FR46 3000 3012 3400 0123 4567 812; GET http://10.20.30.40:8080/; Diners 38520000023237\n    grpc (1.62.0.1)\n";
    const types = ["phone", "iban", "ip_address", "credit_card"];
    const r = await api<Tokenized>("/pii/tokenize", { json: { text, types } });
    expect(r.status).toBe(200);
    expect(r.body.text).toBe("Büro [PHONE_1], portable [PHONE_2]; IBAN [IBAN_1]; GET http://[IP_ADDRESS_1]:8080/; Diners [CREDIT_CARD_1]\n    grpc (1.62.0.1)\n");
  });

  it("starts a fresh vault for every request", async () => {
    await api("/pii/tokenize", { json: { text: "ann@example.com" } });
    const r = await api<Tokenized>("/pii/tokenize", { json: { text: "bob@example.com" } });
    expect(r.body.text).toBe("[EMAIL_1]");
  });

  it("looks for the kinds in types instead of the configured ones, built-in or custom", async () => {
    const r = await api<Tokenized>("/pii/tokenize", { json: { text: "4111 1111 1111 1111 ann@example.com EMP-004211", types: ["credit_card", "employee_id"] } });
    expect(r.body.text).toBe("[CREDIT_CARD_1] ann@example.com [EMPLOYEE_ID_1]");
  });

  it("leaves a literal token of the input alone and gives the value another number", async () => {
    const r = await api<Tokenized>("/pii/tokenize", { json: { text: "[EMAIL_1] is a placeholder for ann@example.com" } });
    expect(r.body.text).toBe("[EMAIL_1] is a placeholder for [EMAIL_2]");
  });

  it("refuses an unknown kind, a missing text, an unknown field and a body over the server's maximum", async () => {
    expect(expectError(await api("/pii/tokenize", { json: { text: "x", types: ["passport"] } }), 400, "INVALID_INPUT").message).toMatch(/"passport"/);
    expectError(await api("/pii/tokenize", { json: { types: ["email"] } }), 400, "INVALID_INPUT");
    expectError(await api("/pii/tokenize", { json: { text: "x", lang: "en" } }), 400, "INVALID_INPUT");
    expectError(await api("/pii/tokenize", { json: { text: "x".repeat(70 * 1024) } }), 413, "BODY_TOO_LARGE");
  });

  it("is in the OpenAPI document with its body and response", async () => {
    const doc = (await api<{ paths: Record<string, Record<string, { tags: string[]; "x-sandgate-scope"?: string }>> }>("/openapi.json")).body;
    expect(doc.paths["/pii/tokenize"]?.post?.tags).toEqual(["pii"]);
    expect(doc.paths["/pii/tokenize"]?.post?.["x-sandgate-scope"]).toBe("execute");
  });
});

describe("POST /pii/tokenize with API keys", () => {
  it("needs a key with the execute scope", async () => {
    const keyed = createTestEngine({ SANDGATE_API_KEYS: "runner:runner-key-0123456789,auditor:auditor-key-0123456789", SANDGATE_KEY_SCOPES: "auditor:audit" }, { python: 0, javascript: 0, bash: 0 });
    const keyedServer = await startHttpServer(serverContext(keyed.engine, keyed.config));
    try {
      const call = jsonApi(() => keyedServer.url);
      expectError(await call("/pii/tokenize", { json: { text: "ann@example.com" } }), 401, "UNAUTHORIZED");
      expectError(await call("/pii/tokenize", { json: { text: "ann@example.com" }, headers: bearer("auditor-key-0123456789") }), 403, "FORBIDDEN");
      const r = await call<Tokenized>("/pii/tokenize", { json: { text: "ann@example.com" }, headers: bearer("runner-key-0123456789") });
      expect(r.body.text).toBe("[EMAIL_1]");
    } finally {
      await keyedServer.close();
      await keyed.close();
    }
  });
});
