// The vocabulary of the upstream tool policy: its actions, the form of its rule keys ("server" or
// "server.tool") and the SANDGATE_TOOL_POLICY format ("server.tool=approve,server=deny").

import { SandgateError } from "../errors/index.js";
import type { EnvCodec } from "./env-codecs.js";

/** What the tool policy decides for one call from sandboxed code. */
export const TOOL_ACTIONS = ["allow", "deny", "approve"] as const;
export type ToolAction = (typeof TOOL_ACTIONS)[number];

/** A rule's key: an upstream server's name, or its name, a dot and one of its tools' names. */
export const TOOL_RULE_KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}(\.[^\s,=]{1,128})?$/;

export const toolRulesCodec: EnvCodec<Record<string, ToolAction>> = {
  kind: "custom",
  format: "`server.tool=action,server=action`",
  parse(raw, _current, variable) {
    const rules: Record<string, ToolAction> = {};
    for (const [index, part] of raw.split(",").entries()) {
      const equals = part.lastIndexOf("=");
      const key = equals === -1 ? "" : part.slice(0, equals).trim();
      const action = equals === -1 ? "" : part.slice(equals + 1).trim();
      if (!TOOL_RULE_KEY.test(key) || !(TOOL_ACTIONS as readonly string[]).includes(action) || key in rules) {
        throw new SandgateError(
          "CONFIG_INVALID",
          `${variable} entry ${index + 1} (${JSON.stringify(part.trim())}) is not of the form server=action or server.tool=action, with action allow, deny or approve${key in rules ? ` (${key} appears twice)` : ""}`,
          { data: { variable } },
        );
      }
      rules[key] = action as ToolAction;
    }
    return rules;
  },
  show: (value) => Object.entries(value).map(([key, action]) => `${key}=${action}`).join(","),
  example: (current) => (current?.["example-server"] === "deny" ? "example-server=approve" : "example-server=deny,example-server.write_file=approve"),
};
