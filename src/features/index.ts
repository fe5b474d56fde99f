// Every feature's declared operations, in the order the surfaces list them. The MCP tool table,
// the REST routes and OpenAPI are derived from this list (server/operation-tools.ts,
// server/http/operation-routes.ts); a feature joins by adding its operations here.

import { auditOperations } from "./audit/index.js";
import { codemodeOperations } from "./codemode/index.js";
import { executeOperations } from "./execute/index.js";
import { fileOperations } from "./files/index.js";
import { governanceOperations } from "./governance/index.js";
import { jobOperations } from "./jobs/index.js";
import { piiOperations } from "./pii/index.js";
import { sessionOperations } from "./sessions/index.js";
import { statusOperations } from "./status/index.js";

export { auditOperations, codemodeOperations, executeOperations, fileOperations, governanceOperations, jobOperations, piiOperations, sessionOperations, statusOperations };

export const OPERATIONS = [
  ...statusOperations,
  ...executeOperations,
  ...codemodeOperations,
  ...jobOperations,
  ...governanceOperations,
  ...auditOperations,
  ...piiOperations,
  ...sessionOperations,
  ...fileOperations,
] as const;
