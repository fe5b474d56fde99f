// The use_sandgate prompt tells a model, through the real server, how a plot comes back, that
// packages cannot be installed, how to run long work and how to keep a process across calls.

import { expect, it } from "vitest";
import { connectMcp } from "../fixtures/mcp-client.js";
import { useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

it("use_sandgate names images and sandgate.show, no pip installs, background jobs and keep_processes", async () => {
  await withServer(fx, {}, async (server) => {
    const { client } = await connectMcp(server.url);
    try {
      const prompt = await client.getPrompt({ name: "use_sandgate", arguments: {} });
      const body = (prompt.messages[0]!.content as { text: string }).text;
      expect(body).toMatch(/Plots come back to you as images/);
      expect(body).toContain("sandgate.show(x)");
      expect(body).toMatch(/Packages cannot be installed \(no network\)/);
      expect(body).toMatch(/background: true/);
      expect(body).toMatch(/keep_processes: true/);
    } finally {
      await client.close();
    }
  });
});
