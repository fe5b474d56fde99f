// SandgateError: the one error type that may reach a user, with a string code.
// The code decides the JSON-RPC code and HTTP status (see codes.ts).

import type { ErrorCode } from "./codes.js";

export interface SandgateErrorOptions {
  data?: Record<string, unknown>;
  cause?: unknown;
}

export class SandgateError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: SandgateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SandgateError";
    this.code = code;
    this.data = options.data ?? {};
  }

  toJSON(): { code: ErrorCode; message: string; data: Record<string, unknown> } {
    return { code: this.code, message: this.message, data: this.data };
  }
}

export function isSandgateError(value: unknown): value is SandgateError {
  return value instanceof SandgateError;
}
