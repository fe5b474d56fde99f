// What the surfaces derive from a declared operation: MCP hints from its effects, and a REST route's
// description, body parsing, concurrency cap and response check from its REST surface.

import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSandgateError } from "../../src/errors/index.js";
import { defineOperation, runOperation, type AnyOperation } from "../../src/operations/index.js";
import { operationRoutes } from "../../src/server/http/operation-routes.js";
import { annotationsOf, operationTools } from "../../src/server/operation-tools.js";

const mcp = { tool: "count_it", title: "Count it", description: "What the model reads.", text: () => "" };

function countOperation(rest: Record<string, unknown>, answer: (n: number) => Record<string, unknown> = (n) => ({ twice: n * 2, n })) {
  return defineOperation({
    id: "test.count",
    summary: "Count",
    scope: "execute",
    effects: ["read"],
    input: z.object({ n: z.number().int() }).strict(),
    output: z.object({ n: z.number(), twice: z.number() }),
    run: async (_host: object, input) => answer(input.n) as { n: number; twice: number },
    surfaces: { mcp, rest: { method: "post", path: "/count", tag: "test", ...rest }, sandbox: null },
  });
}

/** The operation's one route, served in process: errors come back as their code and message. */
async function post(operation: AnyOperation<object>, body: unknown): Promise<{ status: number; text: string }> {
  const [route] = operationRoutes([operation], {});
  const app = new Hono();
  app.post(route?.path ?? "", async (c) => {
    try {
      const handle = await route!.prepare(c);
      return c.json(await handle({ c, signal: c.req.raw.signal, keepSlot: () => () => undefined, owner: "local" }));
    } catch (error) {
      return c.json(isSandgateError(error) ? { code: error.code, message: error.message } : { message: (error as Error).message }, 400);
    }
  });
  const response = await app.request("/count", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: response.status, text: await response.text() };
}

describe("MCP hints from an operation's effects", () => {
  it("a read-only tool says nothing of destructive or idempotent unless declared idempotent, when it says both", () => {
    expect(annotationsOf("Read", ["read"])).toEqual({ title: "Read", readOnlyHint: true, openWorldHint: false });
    expect(Object.keys(annotationsOf("Analyse", ["read"], true))).toEqual(["title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]);
    expect(annotationsOf("Analyse", ["read"], true)).toMatchObject({ destructiveHint: false, idempotentHint: true });
    expect(annotationsOf("Stop", ["delete"], true)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
  });
});

describe("a REST route from an operation", () => {
  it("has the REST surface's description, the MCP one when it names none, and none when it says null", () => {
    const [own] = operationRoutes([countOperation({ description: "For programs." })], {});
    const [fromMcp] = operationRoutes([countOperation({})], {});
    const [none] = operationRoutes([countOperation({ description: null })], {});
    expect(own?.description).toBe("For programs.");
    expect(fromMcp?.description).toBe("What the model reads.");
    expect(none && "description" in none).toBe(false);
  });

  it("counts against the concurrency cap when its REST surface says it costs like a run", () => {
    expect(operationRoutes([countOperation({ countsAsRun: true })], {})[0]?.runsCode).toBe(true);
    expect(operationRoutes([countOperation({})], {})[0]?.runsCode).toBe(false);
  });

  it("refuses a bad body as the MCP tool refuses the same arguments when its body is the tool's", async () => {
    const asTool = await post(countOperation({ body: "tool" }), { n: "seven" });
    expect(JSON.parse(asTool.text)).toEqual({ code: "INVALID_INPUT", message: "invalid arguments for tool count_it: n: Expected number, received string" });
    const asBody = await post(countOperation({}), { n: "seven" });
    expect(JSON.parse(asBody.text)).toEqual({ code: "INVALID_INPUT", message: "body field n: Expected number, received string" });
  });

  it("answers what run returned, its fields in run's order, and refuses an answer outside the output schema", async () => {
    expect(await post(countOperation({}), { n: 2 })).toEqual({ status: 200, text: '{"twice":4,"n":2}' });
    const wrong = await post(countOperation({}, (n) => ({ n: String(n), twice: n })), { n: 2 });
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.text).message).toMatch(/^operation test\.count answered outside its output schema/);
  });
});

describe("a surface that leaves input fields out", () => {
  const withFields = (field: z.ZodTypeAny) =>
    defineOperation({
      id: "test.fields",
      summary: "Fields",
      scope: "execute",
      effects: ["read"],
      input: z.object({ q: z.string(), extra: field }).strict(),
      output: z.object({ seen: z.string() }),
      run: async (_host: object, input) => ({ seen: JSON.stringify(input) }),
      surfaces: { mcp: { ...mcp, codemode: { omit: ["extra"] } }, rest: { method: "post", path: "/fields", tag: "test", omits: ["extra"] }, sandbox: null },
    });

  it("takes an optional field without a default, and run sees it absent", async () => {
    const operation = withFields(z.number().optional());
    const [tool] = operationTools([operation], {});
    expect(Object.keys((tool?.codemode?.input.shape ?? {}) as object)).toEqual(["q"]);
    expect(await post({ ...operation, surfaces: { ...operation.surfaces, rest: { ...operation.surfaces.rest!, path: "/count" } } }, { q: "a" })).toMatchObject({ text: JSON.stringify({ seen: JSON.stringify({ q: "a" }) }) });
  });

  it("refuses, when the surfaces are built, to leave out a required field or one with a default (run would miss its value)", () => {
    for (const field of [z.number(), z.number().default(3), z.number().default(3).optional()]) {
      const operation = withFields(field);
      expect(() => operationTools([operation], {})).toThrow(/codemode profile leaves out extra, which is not an optional input field without a default/);
      expect(() => operationRoutes([operation], {})).toThrow(/REST leaves out extra, which is not an optional input field without a default/);
    }
  });
});

describe("runOperation", () => {
  it("answers the very object run returned once it fits the output schema, and throws a bug for one that does not", async () => {
    const returned = { twice: 4, n: 2, note: "kept beside it" };
    const operation = countOperation({}, () => returned);
    expect(await runOperation(operation, {}, { n: 2 }, { owner: "local" })).toBe(returned);
    const broken = countOperation({}, () => ({ n: "two" }));
    await expect(runOperation(broken, {}, { n: 2 }, { owner: "local" })).rejects.toThrow(/test.count answered outside its output schema/);
  });
});
