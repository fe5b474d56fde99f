// POST /pii/tokenize: a text with its personal data replaced by tokens, and where each value was,
// for testing what the PII policy catches. One fresh vault per request: tokens are stable within it.

import { z } from "zod";
import { PiiVault, scanOptions } from "../../pii/index.js";
import type { ServerContext } from "../context.js";
import { defineRoute, type RestRoute } from "./define-route.js";

const piiEntitySchema = z.object({
  type: z.string().describe("A built-in kind (email, phone, credit_card, ssn, iban, ip_address, name) or a custom pattern's name"),
  token: z.string().describe("What replaced the value, e.g. [EMAIL_1]"),
  start: z.number().int().describe("Where the value was in the input, in Unicode code points"),
  end: z.number().int().describe("End of the value in the input (exclusive), in code points"),
});
const tokenizeOutput = z.object({ text: z.string(), entities: z.array(piiEntitySchema) });

export function piiRoutes(ctx: ServerContext): RestRoute[] {
  return [
    defineRoute({
      method: "post",
      path: "/pii/tokenize",
      scope: "execute",
      tag: "pii",
      summary: "Replace the personal data in a text with tokens ([EMAIL_1]) and list what was found",
      description: "Uses pii.types and pii.patterns of the config unless `types` is given; the same value gets the same token within one request. 400 INVALID_INPUT names an unknown kind.",
      body: z.object({
        text: z.string().max(ctx.config.server.maxBodyBytes).describe("The text to scan"),
        types: z.array(z.string().max(64)).min(1).max(64).optional().describe("Kinds to look for instead of pii.types: built-in ones or custom pattern names"),
      }),
      response: tokenizeOutput,
      handle: async ({ body }) => {
        const { text, entities } = new PiiVault().tokenize(body.text, scanOptions(ctx.config.pii, body.types));
        return { text, entities };
      },
    }),
  ];
}
