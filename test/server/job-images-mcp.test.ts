// A background job's images reach an MCP client as image content, as execute_code's do: get_job
// and stop_job of a job that ended with a plot send it as an `image` item, through the real
// server and the SDK client, and leave the base64 out of structuredContent.

import { describe, expect, it } from "vitest";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ pool: { python: 1, javascript: 0, bash: 0 } });

/** A 1x1 PNG shown by code without matplotlib, so the test needs nothing the host may lack. */
const SHOW_PNG =
  "import base64, sandgate\n" +
  "sandgate.show(base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='))\n" +
  "print('plotted')";

describe("background job images over MCP", () => {
  it("get_job and stop_job of an ended job send its image as image content", async () => {
    const { client } = await connectMcp(f.server.url);
    try {
      const started = await callTool(client, "execute_code", { language: "python", background: true, code: SHOW_PNG });
      const id = started.structuredContent.job_id as string;
      let read = await callTool(client, "get_job", { job_id: id, wait_s: 20 });
      while ((read.structuredContent as { status: string }).status === "running") {
        read = await callTool(client, "get_job", { job_id: id, wait_s: 20, since: (read.structuredContent as { next: unknown }).next });
      }
      const images = read.content.filter((c) => c.type === "image");
      expect(images).toEqual([expect.objectContaining({ type: "image", mimeType: "image/png" })]);
      expect(JSON.stringify(read.structuredContent)).not.toContain("iVBORw0KGgo");
      const stopped = await callTool(client, "stop_job", { job_id: id });
      expect(stopped.content.filter((c) => c.type === "image")).toHaveLength(1);
      expect(JSON.stringify(stopped.structuredContent)).not.toContain("iVBORw0KGgo");
    } finally {
      await client.close();
    }
  });
});
