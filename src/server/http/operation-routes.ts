// REST routes derived from declared operations: the method, path and tag from the operation's REST
// surface; the path's `:names` are input fields, the rest of the input is the JSON body (the query
// of a GET). Each field is parsed once, by the operation's own schema; the handler is the
// operation's run, with no MCP tool in between.

import type { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { descriptionFor, inputWithout, runOperation, type AnyOperation } from "../../operations/index.js";
import { parseOperationArguments } from "../tools.js";
import { defineRoute, type RestRoute } from "./define-route.js";

function pathFields(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] ?? "");
}

/** The path parameters parsed by the operation's schema for those fields: INVALID_INPUT naming the field. */
function parseParams(schema: z.AnyZodObject, params: Record<string, string>): Record<string, unknown> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") ?? "";
  throw new SandgateError("INVALID_INPUT", `path parameter ${field}: ${issue?.message ?? "invalid"}`, { data: { field, location: "path parameter" } });
}

/** The routes of the operations that appear on REST, bound to `host`. */
export function operationRoutes<Host>(operations: readonly AnyOperation<Host>[], host: Host): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const operation of operations) {
    const rest = operation.surfaces.rest;
    if (!rest) continue;
    const fields = pathFields(rest.path);
    const shape = operation.input.shape as Record<string, z.ZodTypeAny>;
    for (const field of fields) if (!(field in shape)) throw new Error(`operation ${operation.id}: path parameter :${field} is not an input field`);
    const inPath = Object.fromEntries(fields.map((field) => [field, true as const]));
    const params = operation.input.pick(inPath);
    const remaining = inputWithout(operation, rest.omits ?? [], "REST").omit(inPath);
    const hasBody = Object.keys(remaining.shape as object).length > 0;
    const part = rest.method === "get" ? { query: remaining } : hasBody ? { body: remaining } : {};
    const mcp = operation.surfaces.mcp;
    const description = rest.description === undefined ? (mcp ? descriptionFor(mcp.description, host) : undefined) : (rest.description ?? undefined);
    if (operation.scope === "public" && (rest.method !== "get" || fields.length > 0 || operation.effects.some((effect) => effect !== "read"))) {
      throw new Error(`operation ${operation.id}: a public operation is a read served by GET at a fixed path`);
    }
    if (rest.body === "tool" && (!mcp || fields.length > 0 || rest.method === "get" || (rest.omits?.length ?? 0) > 0)) {
      throw new Error(`operation ${operation.id}: a body parsed as the tool's arguments needs an MCP tool and the whole input in the body`);
    }
    routes.push(
      defineRoute({
        method: rest.method,
        path: rest.path,
        scope: operation.scope,
        tag: rest.tag,
        summary: operation.summary,
        ...(description !== undefined ? { description } : {}),
        ...part,
        ...(rest.body === "tool" && mcp ? { parseBody: (value: unknown) => parseOperationArguments(operation, mcp.tool, value) } : {}),
        response: operation.output,
        successStatus: rest.status ?? 200,
        runsCode: operation.effects.includes("runs-code") || rest.countsAsRun === true,
        handle: async ({ params: raw, body, query, owner, signal }) => {
          const input = { ...parseParams(params, raw), ...(rest.method === "get" ? query : body) };
          // The response check: the answer is what run returned, as it ordered its fields, once it fits the output schema.
          return runOperation(operation, host, input, { owner, signal });
        },
      }),
    );
  }
  return routes;
}
