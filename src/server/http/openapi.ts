// The OpenAPI 3.1 document of the REST API, generated from the route table (define-route.ts) and
// its zod schemas, the same ones each request is parsed with, so docs and behaviour cannot drift.

import { toJsonSchema } from "../json-schema.js";
import { errorBodySchema } from "../wire.js";
import { bodyExample, curlExample } from "./openapi-examples.js";
import type { RestRoute } from "./rest-routes.js";

/** "/sessions/:session_id" -> "/sessions/{session_id}". */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, "{$1}");
}

/** The fields of an object schema as OpenAPI parameters `in` the path or query. */
function parametersOf(schema: RestRoute["query"], where: "path" | "query"): unknown[] {
  const json = toJsonSchema(schema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return { name, in: where, required: where === "path" || (json.required?.includes(name) ?? false), schema: rest, ...(description ? { description } : {}) };
  });
}

/** The request body: its media types (a media type object holds no description; the body does). */
function requestBody(route: RestRoute): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (route.body) {
    const schema = toJsonSchema(route.body);
    content["application/json"] = { schema, example: bodyExample(route.method, route.path, schema) };
  }
  if (route.rawBody) content[route.rawBody.contentType] = { schema: route.rawBody.schema ?? { type: "string", format: "binary" } };
  return { required: true, ...(route.rawBody ? { description: route.rawBody.description } : {}), content };
}

/** The curl line of an operation, as x-codeSamples (the form documentation renderers read). */
function codeSamples(route: RestRoute, secured: boolean, body: Record<string, unknown> | undefined): unknown[] {
  const content = body?.content as Record<string, { example?: unknown }> | undefined;
  const json = content?.["application/json"];
  const source = curlExample(route.method, route.path, {
    secured: secured && route.scope !== "public",
    ...(json ? { body: json.example } : route.rawBody ? { contentType: route.rawBody.contentType } : {}),
  });
  return [{ lang: "Shell", label: "curl", source }];
}

function operation(route: RestRoute, secured: boolean): Record<string, unknown> {
  const parameters = [...parametersOf(route.params, "path"), ...parametersOf(route.query, "query")];
  const success: Record<string, unknown> = { "application/json": { schema: toJsonSchema(route.response) } };
  if (route.rawResponse) success[route.rawResponse.contentType] = { schema: { type: "string", format: "binary", description: route.rawResponse.description } };
  if (route.streams) success["text/event-stream"] = { schema: { type: "string", description: "server-sent events: stdout, stderr, then result or error" } };
  const body = route.body || route.rawBody ? requestBody(route) : undefined;
  return {
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ? ch.toUpperCase() : ""))}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: {
      [String(route.successStatus)]: { description: "success", content: success },
      default: route.refuse
        ? { description: "a JSON-RPC error; the status follows its data.code", content: { "application/json": { schema: toJsonSchema(route.response) } } }
        : { description: "error: code, message and data; the status follows the code", content: { "application/json": { schema: toJsonSchema(errorBodySchema) } } },
    },
    ...(secured && route.scope !== "public" ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    // The API key scope the route needs (server.keyScopes); "any" is every valid key, "public" no key at all.
    "x-sandgate-scope": route.scope,
    "x-codeSamples": codeSamples(route, secured, body),
  };
}

export function openApiDocument(routes: RestRoute[], options: { version: string; secured: boolean }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    (paths[path] ??= {})[route.method] = operation(route, options.secured);
  }
  // Any valid key may speak MCP; each tool then needs its own scope, and tools outside the key's are not listed.
  const mcp = { tags: ["mcp"], security: options.secured ? [{ bearerAuth: [] }] : [], "x-sandgate-scope": "any" };
  const mcpCall = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_code", arguments: { language: "python", code: "1 + 1" } } };
  const mcpSample = (method: string, body?: unknown): unknown[] => {
    const curl = curlExample(method, "/mcp", { secured: options.secured, ...(body === undefined ? {} : { body }) });
    // Streamable HTTP wants both media types accepted, and a session's id once initialize gave one.
    const headers = body === undefined ? "-H 'Mcp-Session-Id: <id from initialize>' " : "-H 'accept: application/json, text/event-stream' ";
    return [{ lang: "Shell", label: "curl", source: curl.replace(/^curl -s /, `curl -s ${headers}`) }];
  };
  paths["/mcp"] = {
    post: {
      operationId: "postMcp",
      summary: "MCP Streamable HTTP endpoint (JSON-RPC 2.0 messages; see the MCP specification)",
      description: "Each tool needs the scope of the REST route that does the same (execute_code: execute, file_read: files, ...); tools/list shows only those the key may call.",
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: { type: "object", description: "a JSON-RPC 2.0 request, notification or response" },
            example: mcpCall,
          },
        },
      },
      responses: { "200": { description: "JSON or text/event-stream" } },
      "x-codeSamples": mcpSample("post", mcpCall),
      ...mcp,
    },
    get: { operationId: "getMcp", summary: "MCP server-to-client event stream of a session", responses: { "200": { description: "text/event-stream" } }, "x-codeSamples": mcpSample("get"), ...mcp },
    delete: { operationId: "deleteMcp", summary: "End an MCP session", responses: { "200": { description: "session ended" } }, "x-codeSamples": mcpSample("delete"), ...mcp },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "sandgate",
      version: options.version,
      description: "Code execution gateway for AI agents: run Python, JavaScript, TypeScript and Bash in Linux sandboxes. The same tools are served over MCP at /mcp.",
    },
    // Relative: the document is served by the server it describes, whatever its address.
    servers: [{ url: "/", description: "this sandgate server" }],
    paths,
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "One of the API keys configured in server.apiKeys / SANDGATE_API_KEYS (or server.apiKey / SANDGATE_API_KEY); its name is the caller's identity and server.keyScopes / SANDGATE_KEY_SCOPES what it may do (each operation's x-sandgate-scope)" } } },
  };
}
