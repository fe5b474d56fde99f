// REST routes derived from declared operations: which input fields a route takes, and its
// OpenAPI description, as the operation's REST surface says.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineOperation } from "../../src/operations/index.js";
import { publicPaths } from "../../src/server/http/guard.js";
import { openApiDocument } from "../../src/server/http/openapi.js";
import { operationRoutes } from "../../src/server/http/operation-routes.js";
import { operationTools } from "../../src/server/operation-tools.js";
import type { OperationScope, RestSurface } from "../../src/operations/index.js";

const input = z.object({ id: z.string().min(1), filter: z.string().optional(), limit: z.number().optional() }).strict();

function operation(rest: { omits?: string[]; description?: string | null }) {
  return defineOperation({
    id: "things.list",
    summary: "List things",
    scope: "sessions",
    effects: ["read"],
    input,
    output: z.object({ n: z.number() }),
    run: async () => ({ n: 1 }),
    surfaces: {
      mcp: { tool: "list_things", title: "List things", description: "What MCP says", text: () => "" },
      rest: { method: "get", path: "/things/:id", tag: "things", ...rest },
      sandbox: null,
    },
  });
}

describe("operationRoutes", () => {
  it("takes every input field outside the path as a query parameter, and the MCP description, by default", () => {
    const [route] = operationRoutes([operation({})], {});
    expect(Object.keys(route!.query.shape as object)).toEqual(["filter", "limit"]);
    expect(route!.description).toBe("What MCP says");
  });

  it("leaves out the input fields the REST surface omits, and the description when it is null", () => {
    const [route] = operationRoutes([operation({ omits: ["filter"], description: null })], {});
    expect(Object.keys(route!.query.shape as object)).toEqual(["limit"]);
    expect(route!).not.toHaveProperty("description");
  });

  it("gives a route its own description", () => {
    const [route] = operationRoutes([operation({ description: "What REST says" })], {});
    expect(route!.description).toBe("What REST says");
  });

  it("refuses to leave out a required field or one the input lacks", () => {
    expect(() => operationRoutes([operation({ omits: ["id"] })], {})).toThrow(/REST leaves out id, which is not an optional input field/);
    expect(() => operationRoutes([operation({ omits: ["nope"] })], {})).toThrow(/REST leaves out nope/);
  });
});

/** A status-like operation: read-only, REST only unless given an MCP tool. */
function statusOperation(scope: OperationScope, rest: RestSurface, effects: Array<"read" | "write"> = ["read"], mcp = false) {
  return defineOperation({
    id: "status.thing",
    summary: "A thing's status",
    scope,
    effects,
    input: z.object({ id: z.string().optional() }),
    output: z.object({ ok: z.boolean() }),
    run: async () => ({ ok: true }),
    surfaces: { mcp: mcp ? { tool: "thing_status", title: "Thing status", description: "d", text: () => "" } : null, rest, sandbox: null },
  });
}

describe("operations anyone may call (scope public)", () => {
  it("become GET routes of scope public, which the API-key guard and OpenAPI then leave open", () => {
    const routes = operationRoutes([statusOperation("public", { method: "get", path: "/thing", tag: "status" }), statusOperation("any", { method: "get", path: "/other", tag: "status" })], {});
    expect(routes.map((r) => r.scope)).toEqual(["public", "any"]);
    expect([...publicPaths(routes)].sort()).toEqual(["/docs", "/openapi.json", "/thing"]);
    const doc = openApiDocument(routes, { version: "1", secured: true }) as { paths: Record<string, { get: { security: unknown[] } }> };
    expect(doc.paths["/thing"]?.get.security).toEqual([]);
    expect(doc.paths["/other"]?.get.security).toEqual([{ bearerAuth: [] }]);
  });

  it("are refused when they write, take a path parameter or are not a GET: a key would guard nothing else", () => {
    expect(() => operationRoutes([statusOperation("public", { method: "post", path: "/thing", tag: "status" })], {})).toThrow(/a public operation is a read served by GET at a fixed path/);
    expect(() => operationRoutes([statusOperation("public", { method: "get", path: "/thing/:id", tag: "status" })], {})).toThrow(/public operation/);
    expect(() => operationRoutes([statusOperation("public", { method: "get", path: "/thing", tag: "status" }, ["read", "write"])], {})).toThrow(/public operation/);
  });

  it("have no MCP tool, nor do operations of scope any: tools/list shows a key what its scopes allow", () => {
    for (const scope of ["public", "any"] as const) {
      expect(() => operationTools([statusOperation(scope, { method: "get", path: "/thing", tag: "status" }, ["read"], true)], {})).toThrow(`an MCP tool needs an API key scope, not "${scope}"`);
    }
  });
});
