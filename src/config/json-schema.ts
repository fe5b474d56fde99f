// The JSON Schema of sandgate.json (`sandgate config --schema`), for editors: every key with the
// description its setting() declares, and the default where it can be written down.

import { zodToJsonSchema } from "zod-to-json-schema";
import { configSchema } from "./schema.js";
import { declaredSettings } from "./settings.js";

type JsonObject = Record<string, unknown>;

/** The node describing config key `path` inside the schema's nested `properties`. */
function propertyAt(root: JsonObject, path: readonly string[]): JsonObject | undefined {
  let node: JsonObject | undefined = root;
  for (const name of path) node = (node?.properties as Record<string, JsonObject> | undefined)?.[name];
  return node;
}

/** A self-contained draft-07 JSON Schema of the config file. */
export function configJsonSchema(): JsonObject {
  const { $schema: _dialect, ...schema } = zodToJsonSchema(configSchema, { $refStrategy: "none", target: "jsonSchema7" }) as JsonObject;
  for (const setting of declaredSettings()) {
    const node = propertyAt(schema, setting.path);
    // Computed defaults depend on the host; the description states them in words instead.
    if (node && setting.default !== undefined && typeof setting.default !== "function") node.default = setting.default;
  }
  return { $schema: "http://json-schema.org/draft-07/schema#", title: "sandgate.json", ...schema };
}
