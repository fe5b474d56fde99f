// files.volumes: the host directories the admin mounted into every sandbox, and the workspace
// path (MCP get_volume_path; REST GET /volumes).

import type { VolumeConfig } from "../../config/index.js";
import { defineOperation } from "../../operations/index.js";
import { getVolumePathInput, getVolumePathOutput } from "./wire.js";

export const listVolumes = defineOperation({
  id: "files.volumes",
  summary: "Volumes the admin mounted into every sandbox",
  scope: "files",
  effects: ["read"],
  input: getVolumePathInput,
  output: getVolumePathOutput,
  async run(host: { config: { volumes: readonly VolumeConfig[] } }) {
    const volumes = host.config.volumes.map((v) => ({ name: v.name, path: `/mnt/${v.name}`, read_only: v.readOnly, ...(v.description ? { description: v.description } : {}) }));
    return { volumes, workspace: "/workspace" };
  },
  surfaces: {
    mcp: {
      tool: "get_volume_path",
      title: "Show mounted volumes",
      description: "List the host directories mounted into every sandbox (under /mnt) and the workspace path.",
      text: (out) => (out.volumes.length === 0 ? "No volumes are configured. Code can read and write /workspace (and /tmp)." : JSON.stringify(out, null, 2)),
    },
    rest: { method: "get", path: "/volumes", tag: "files", description: null },
    sandbox: null,
  },
});
