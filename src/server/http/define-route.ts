// A REST route as one typed object: method, path, zod schemas for path params, query and body,
// the response schema and a handler typed by what they parse to. The app and OpenAPI read it.

import type { Context } from "hono";
import { z } from "zod";
import type { OperationScope } from "../../operations/index.js";
import { SandgateError } from "../../errors/index.js";
import { cutName, nameSome } from "../client-names.js";
import { readJsonBody } from "./errors.js";

export type HttpMethod = "get" | "post" | "put" | "delete";

/** The API key scope a route needs; "any" is every caller the auth guard let in, "public" anyone, without a key (as for operations). */
export type RouteScope = OperationScope;

/** The names of a Hono path's `:params`, as an object type: "/a/:x/b/:y" -> { x: string; y: string }. */
export type PathParams<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & PathParams<Rest>
  : Path extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, string>;

type Parsed<S extends z.AnyZodObject | undefined> = S extends z.AnyZodObject ? z.infer<S> : Record<never, unknown>;

/** What a handler gets besides the parsed input. */
export interface RouteEnv {
  c: Context;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** For answers that outlive the handler (streams): the caller releases the concurrency slot. */
  keepSlot: () => () => void;
  /** The verified caller (server/http/caller.ts): sessions and files are looked up among its own. */
  owner: string;
}

export interface RouteInput<Path extends string, B extends z.AnyZodObject | undefined, Q extends z.AnyZodObject | undefined> extends RouteEnv {
  params: PathParams<Path>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** The route as the app and the OpenAPI document see it, whatever its input types. */
export interface RestRoute {
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  scope: RouteScope;
  params: z.AnyZodObject;
  query: z.AnyZodObject;
  body?: z.AnyZodObject;
  response: z.ZodType;
  successStatus: 200 | 201;
  /** Counted against the per-client concurrency cap (it runs code). */
  runsCode: boolean;
  /** Also answers with server-sent events (documented in OpenAPI). */
  streams: boolean;
  /** How a request refused before the handler runs is answered; default the REST error body. */
  refuse?: (error: SandgateError, c: Context) => Response;
  /** A body the handler streams itself (see RawBody); the body guard leaves it alone. */
  rawBody?: RawBody;
  /** A success answer that is not JSON, for the OpenAPI document. */
  rawResponse?: { contentType: string; description: string };
  /** Parses the request with the route's schemas (INVALID_INPUT naming the field) and returns the bound handler. */
  prepare(c: Context): Promise<(env: RouteEnv) => Promise<unknown>>;
}

/**
 * A request body that is not JSON: when `accepts` says so, nothing reads or caps it before the
 * handler, which streams it (and bounds it) itself. OpenAPI lists it under `contentType`.
 */
export interface RawBody {
  contentType: string;
  description: string;
  schema?: Record<string, unknown>;
  accepts(c: Context): boolean;
}

export interface RouteSpec<Path extends string, B extends z.AnyZodObject | undefined, Q extends z.AnyZodObject | undefined, R extends z.ZodType> {
  method: HttpMethod;
  path: Path;
  summary: string;
  description?: string;
  tag: string;
  /** What an API key needs to call the route (server.keyScopes). */
  scope: RouteScope;
  /** The JSON body; unknown fields are refused. */
  body?: B;
  /**
   * Parses the body instead of `body.strict()`, for a route whose body is a tool's input: the
   * tool's own parser, so that REST and MCP refuse the same arguments with the same error.
   */
  parseBody?: (value: unknown) => z.infer<NonNullable<B>>;
  /** The query string (each parameter's last value); unknown parameters are refused. */
  query?: Q;
  response: R;
  successStatus?: 200 | 201;
  runsCode?: boolean;
  streams?: boolean;
  refuse?: (error: SandgateError, c: Context) => Response;
  rawBody?: RawBody;
  rawResponse?: { contentType: string; description: string };
  handle(input: RouteInput<Path, B, Q>): Promise<z.input<R> | Response>;
}

function paramNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] ?? "");
}

/** `schema.parse(value)` where a failure is INVALID_INPUT naming the part and field. */
function parsePart<S extends z.AnyZodObject>(schema: S, value: unknown, part: "body" | "query parameter" | "path parameter"): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === "unrecognized_keys") {
    const known = Object.keys(schema.shape as Record<string, unknown>);
    const names = nameSome(issue.keys);
    const what = part === "body" ? `unknown field${issue.keys.length > 1 ? "s" : ""} ${names} in the body` : `unknown ${part}${issue.keys.length > 1 ? "s" : ""} ${names}`;
    throw new SandgateError("INVALID_INPUT", `${what}; ${known.length > 0 ? `allowed: ${known.join(", ")}` : "this route takes none"}`, {
      data: { field: cutName(issue.keys[0] ?? ""), location: part },
    });
  }
  const field = issue?.path.join(".") ?? "";
  const where = part === "body" ? (field ? `body field ${field}` : "body") : `${part} ${field}`;
  throw new SandgateError("INVALID_INPUT", `${where}: ${issue?.message ?? "invalid"}`, { data: { field, location: part } });
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return `a ${typeof value}`;
}

function queryObject(c: Context): Record<string, string> {
  return Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v[v.length - 1] ?? ""]));
}

/**
 * Builds a route: params, query and body are parsed strictly with their schemas before the
 * handler runs, and the handler is typed by what they parse to.
 */
export function defineRoute<Path extends string, R extends z.ZodType, B extends z.AnyZodObject | undefined = undefined, Q extends z.AnyZodObject | undefined = undefined>(
  spec: RouteSpec<Path, B, Q, R>,
): RestRoute {
  // Anyone may call a public route, without a key: only a GET at a fixed path is left open by the API-key guard (publicPaths).
  if (spec.scope === "public" && (spec.method !== "get" || paramNames(spec.path).length > 0)) throw new Error(`route ${spec.method.toUpperCase()} ${spec.path}: a public route is a GET at a fixed path`);
  const params = z.object(Object.fromEntries(paramNames(spec.path).map((name) => [name, z.string().min(1)]))).strict();
  const query = (spec.query ?? z.object({})).strict();
  const body = spec.body?.strict();
  const parseBody = async (c: Context): Promise<unknown> => {
    const value = await readJsonBody(c);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new SandgateError("INVALID_INPUT", `the request body must be a JSON object, not ${kindOf(value)}`);
    }
    if (spec.parseBody) return spec.parseBody(value);
    return body ? parsePart(body, value, "body") : {};
  };
  return {
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    tag: spec.tag,
    scope: spec.scope,
    params,
    query,
    ...(body ? { body } : {}),
    response: spec.response,
    successStatus: spec.successStatus ?? 200,
    runsCode: spec.runsCode ?? false,
    streams: spec.streams ?? false,
    ...(spec.refuse ? { refuse: spec.refuse } : {}),
    ...(spec.rawBody ? { rawBody: spec.rawBody } : {}),
    ...(spec.rawResponse ? { rawResponse: spec.rawResponse } : {}),
    async prepare(c) {
      const raw = spec.rawBody?.accepts(c) === true;
      const input = {
        params: parsePart(params, c.req.param(), "path parameter") as PathParams<Path>,
        query: parsePart(query, queryObject(c), "query parameter") as Parsed<Q>,
        body: (body && !raw ? await parseBody(c) : {}) as Parsed<B>,
      };
      return (env) => spec.handle({ ...env, ...input });
    },
  };
}
