// POST /pii/tokenize, the route of the pii.tokenize operation written by hand: its body bounds the
// text by server.maxBodyBytes, a setting, which an operation's declared schema cannot name.

import { operations } from "../operations.js";
import type { ServerContext } from "../context.js";
import { tokenizeInput, tokenizeOutput } from "../../features/pii/index.js";
import { defineRoute, type RestRoute } from "./define-route.js";

export function piiRoutes(ctx: ServerContext): RestRoute[] {
  const tokenize = operations.require("pii.tokenize");
  return [
    defineRoute({
      method: "post",
      path: "/pii/tokenize",
      scope: tokenize.scope,
      tag: "pii",
      summary: tokenize.summary,
      description: "Uses pii.types and pii.patterns of the config unless `types` is given; the same value gets the same token within one request. 400 INVALID_INPUT names an unknown kind.",
      body: tokenizeInput(ctx.config.server.maxBodyBytes),
      response: tokenizeOutput,
      handle: async ({ body, owner, signal }) => tokenizeOutput.parse(await tokenize.run(ctx, body, { owner, signal })),
    }),
  ];
}
