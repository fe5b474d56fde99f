// Workspace files on the wire: the snake_case arguments and results of reading, writing and
// listing a session's /workspace, and of the volumes mounted beside it.

import { z } from "zod";

const encoding = z.enum(["utf8", "base64"]);
const workspacePath = z.string().describe("Relative to /workspace");

export const fileReadInput = z.object({ path: workspacePath, session_id: z.string().min(1), encoding: encoding.optional() }).strict();
export const fileReadOutput = z.object({
  path: z.string(),
  content: z.string(),
  encoding,
  size: z.number().int(),
  note: z.string().optional().describe("For a binary file read without encoding: how it was sent (a blob resource, or a pointer to the REST download when large)"),
});
export const fileWriteInput = z
  .object({ path: workspacePath, content: z.string(), session_id: z.string().min(1), encoding: encoding.optional() })
  .strict();
export const fileWriteOutput = z.object({ path: z.string(), size: z.number().int(), created: z.boolean() });
export const fileListInput = z.object({ path: workspacePath.optional().describe("Default /workspace"), session_id: z.string().min(1) }).strict();
export const fileListOutput = z.object({
  path: z.string(),
  entries: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      type: z.enum(["file", "directory", "symlink", "other"]),
      size: z.number().int(),
      modified_at: z.string(),
    }),
  ),
  truncated: z.boolean(),
});

export const getVolumePathInput = z.object({}).strict();
export const getVolumePathOutput = z.object({
  volumes: z.array(
    z.object({
      name: z.string(),
      path: z.string().describe("Where sandboxed code finds it"),
      read_only: z.boolean(),
      description: z.string().optional(),
    }),
  ),
  workspace: z.string().describe("The writable working directory of every sandbox"),
});
