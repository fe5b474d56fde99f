// Public surface of the errors module.
export { SandgateError, isSandgateError } from "./sandgate-error.js";
export type { SandgateErrorOptions } from "./sandgate-error.js";
export { ERROR_CODES, codeOfJsonRpc, httpStatusOf, jsonRpcCodeOf, isToolResultCode } from "./codes.js";
export type { ErrorCode } from "./codes.js";
export { publicError, registerHostPaths, scrubHostPaths } from "./public-error.js";
export type { ErrorLog, HostPathAlias } from "./public-error.js";
