// pii.tokenize: a text with its personal data replaced by tokens, and where each value was, for
// testing what the PII policy catches. One fresh vault per call: tokens are stable within it.

import { z } from "zod";
import type { SandgateConfig } from "../../config/index.js";
import { defineOperation } from "../../operations/index.js";
import { scanOptions } from "./scan-options.js";
import { PiiVault } from "./vault.js";

const piiEntitySchema = z.object({
  type: z.string().describe("A built-in kind (email, phone, credit_card, ssn, iban, ip_address, name) or a custom pattern's name"),
  token: z.string().describe("What replaced the value, e.g. [EMAIL_1]"),
  start: z.number().int().describe("Where the value was in the input, in Unicode code points"),
  end: z.number().int().describe("End of the value in the input (exclusive), in code points"),
});

/** The input, with the text's bound a surface gives (REST: the body cap, server.maxBodyBytes). */
export function tokenizeInput(maxTextChars?: number) {
  const text = z.string();
  return z.object({
    text: (maxTextChars === undefined ? text : text.max(maxTextChars)).describe("The text to scan"),
    types: z.array(z.string().max(64)).min(1).max(64).optional().describe("Kinds to look for instead of pii.types: built-in ones or custom pattern names"),
  });
}

export const tokenizeOutput = z.object({ text: z.string(), entities: z.array(piiEntitySchema) });

export const tokenizePii = defineOperation({
  id: "pii.tokenize",
  summary: "Replace the personal data in a text with tokens ([EMAIL_1]) and list what was found",
  scope: "execute",
  effects: ["read"],
  input: tokenizeInput(),
  output: tokenizeOutput,
  async run(host: { config: SandgateConfig }, input) {
    const { text, entities } = new PiiVault().tokenize(input.text, scanOptions(host.config.pii, input.types));
    return { text, entities };
  },
  // REST's route is written in server/http/pii-routes.ts: its schema bounds the text by the server's body cap, a setting.
  surfaces: { mcp: null, rest: null, sandbox: null },
});
