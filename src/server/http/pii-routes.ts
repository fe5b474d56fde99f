// POST /pii/tokenize, the route of the pii.tokenize operation written by hand: its body bounds the
// text by server.maxBodyBytes, a setting, which an operation's declared schema cannot name.

import { runOperation } from "../../operations/index.js";
import type { ServerContext } from "../context.js";
import { tokenizeInput, tokenizeOutput, tokenizePii } from "../../features/pii/index.js";
import { defineRoute, type RestRoute } from "./define-route.js";

export function piiRoutes(ctx: ServerContext): RestRoute[] {
  return [
    defineRoute({
      method: "post",
      path: "/pii/tokenize",
      scope: tokenizePii.scope,
      tag: "pii",
      summary: tokenizePii.summary,
      description: "Uses pii.types and pii.patterns of the config unless `types` is given; the same value gets the same token within one request. 400 INVALID_INPUT names an unknown kind.",
      body: tokenizeInput(ctx.config.server.maxBodyBytes),
      response: tokenizeOutput,
      handle: ({ body, owner, signal }) => runOperation(tokenizePii, ctx, body, { owner, signal }),
    }),
  ];
}
