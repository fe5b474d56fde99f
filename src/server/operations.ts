// The registry of declared operations that this server's surfaces derive from (MCP tools, REST
// routes, OpenAPI), checked once at load: ids, tool names and routes are each claimed once.

import { OPERATIONS } from "../features/index.js";
import { OperationRegistry } from "../operations/index.js";
import type { ServerContext } from "./context.js";

export const operations = new OperationRegistry<ServerContext>(OPERATIONS);
