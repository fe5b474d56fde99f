// REST routes derived from declared operations: which input fields a route takes, and its
// OpenAPI description, as the operation's REST surface says.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineOperation } from "../../src/operations/index.js";
import { operationRoutes } from "../../src/server/http/operation-routes.js";

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
