// Saved full outputs as MCP resources (sandgate://outputs/{id}/{stream}) and REST answers: the
// caller that ran the code reads what did not fit in the result; nobody else sees it.

import type { ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { parseSavedOutputUri, SAVED_OUTPUT_PREFIX, type Engine } from "../execution/index.js";

export { isSavedStream } from "../execution/index.js";

export const OUTPUT_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${SAVED_OUTPUT_PREFIX}{id}/{stream}`,
  name: "saved-output",
  title: "Saved full output",
  description: "The full stdout or stderr of a call whose output was shortened, as named by its full_output; kept for a while, readable only by the caller that ran it",
  mimeType: "text/plain",
};

/** UTF-8 as text, anything else as a base64 blob (MCP resources carry one or the other). */
function contentsOf(uri: string, data: Buffer): { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string } {
  try {
    return { uri, mimeType: "text/plain", text: new TextDecoder("utf-8", { fatal: true }).decode(data) };
  } catch {
    return { uri, mimeType: "application/octet-stream", blob: data.toString("base64") };
  }
}

/** The resource behind a saved-output URI of `owner`; undefined when the URI is not one. Rejects OUTPUT_NOT_FOUND. */
export async function readOutputResource(engine: Engine, uri: string, owner: string): Promise<ReturnType<typeof contentsOf> | undefined> {
  const parsed = parseSavedOutputUri(uri);
  if (!parsed) return undefined;
  return contentsOf(uri, await engine.readSavedOutput(parsed.id, parsed.stream, owner));
}
