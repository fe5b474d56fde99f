// The operations registry: what an operation is (operation.ts) and the checked set of them (registry.ts).
export { defineOperation, descriptionFor, inputWithout, runOperation, withAliasesResolved, type AnyOperation, type Effect, type McpExtras, type McpSurface, type Operation, type OperationCall, type OperationScope, type RestSurface, type SandboxSurface, type Surfaces } from "./operation.js";
export { OperationRegistry } from "./registry.js";
