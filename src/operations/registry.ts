// The operations of a running sandgate, checked once when assembled: one id, one MCP tool name and
// one REST method and path each, so two declarations never claim the same place on a surface.

import type { AnyOperation } from "./operation.js";

export class OperationRegistry<Host> {
  private readonly byId = new Map<string, AnyOperation<Host>>();

  constructor(operations: readonly AnyOperation<Host>[]) {
    const tools = new Set<string>();
    const routes = new Set<string>();
    for (const operation of operations) {
      if (this.byId.has(operation.id)) throw new Error(`operation ${operation.id} is declared twice`);
      this.byId.set(operation.id, operation);
      const { mcp, rest } = operation.surfaces;
      if (mcp) {
        if (tools.has(mcp.tool)) throw new Error(`operation ${operation.id}: MCP tool ${mcp.tool} is another operation's`);
        tools.add(mcp.tool);
      }
      if (rest) {
        const route = `${rest.method.toUpperCase()} ${rest.path}`;
        if (routes.has(route)) throw new Error(`operation ${operation.id}: ${route} is another operation's`);
        routes.add(route);
      }
    }
  }

  /** Every operation, in declaration order. */
  list(): AnyOperation<Host>[] {
    return [...this.byId.values()];
  }

  get(id: string): AnyOperation<Host> | undefined {
    return this.byId.get(id);
  }

  /** The operation with this id, for a surface's own route that calls it (a raw upload, a stream); an id not declared is a programming error. */
  require(id: string): AnyOperation<Host> {
    const operation = this.byId.get(id);
    if (!operation) throw new Error(`no operation ${id} is declared`);
    return operation;
  }
}
