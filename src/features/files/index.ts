// The files feature: a session's /workspace files on the wire, their media types (which REST's
// downloads send too), and the operations declared on them.
export { isPassiveType, mimeTypeOf } from "./mime.js";
export { listFiles } from "./list.js";
export { readFile } from "./read.js";
export { listVolumes } from "./volumes.js";
export { fileListInput, fileListOutput, fileReadInput, fileReadOutput, fileWriteInput, fileWriteOutput, getVolumePathInput, getVolumePathOutput } from "./wire.js";
export { writeFile } from "./write.js";

import { listFiles } from "./list.js";
import { readFile } from "./read.js";
import { listVolumes } from "./volumes.js";
import { writeFile } from "./write.js";

/** The operations of this feature, for the registry, in MCP's order: file_read, file_write, file_list, get_volume_path. */
export const fileOperations = [readFile, writeFile, listFiles, listVolumes] as const;
