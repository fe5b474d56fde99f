// Every feature's declared operations, in the order the surfaces list them. The MCP tool table,
// the REST routes and OpenAPI are derived from this list (server/operation-tools.ts,
// server/http/operation-routes.ts); a feature joins by adding its operations here.

import { fileOperations } from "./files/index.js";
import { sessionOperations } from "./sessions/index.js";

export const OPERATIONS = [...sessionOperations, ...fileOperations] as const;
