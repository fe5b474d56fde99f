// Which hits of a search_tools "full" answer get their signatures (signedHits): a table of
// queries and ranked hits, apart from the catalog and the servers that produce them.

import { describe, expect, it } from "vitest";
import { signedHits, type RankedHit } from "../../src/features/codemode/catalog/index.js";

const hit = (id: string, score: number, description = ""): RankedHit => ({ id, name: id.split(".")[1] ?? id, score, description });

const FS = [
  hit("filesystem.write_file", 9, "Create or overwrite a file."),
  hit("filesystem.read_file", 8.5, "Read a file as text. DEPRECATED: Use read_text_file instead."),
  hit("filesystem.read_text_file", 8, "Read a file as text."),
  hit("filesystem.list_directory", 7, "List a directory."),
  hit("filesystem.list_directory_with_sizes", 6.9, "List a directory with sizes."),
  hit("filesystem.move_file", 2, "Move a file."),
];

const CASES: Array<[string, string, RankedHit[], string[]]> = [
  ["the tools a query names by their words, and no others", "list directory read text file write file", FS, ["filesystem.write_file", "filesystem.read_text_file", "filesystem.list_directory"]],
  ["a tool named by its snake_case name, not a longer one that starts the same", "list_directory", FS, ["filesystem.list_directory"]],
  ["a tool named by its id", "filesystem.move_file please", FS, ["filesystem.move_file"]],
  ["a deprecated tool when the query names it", "read_file", FS, ["filesystem.read_file"]],
  ["the best few close to the best, skipping a deprecated one", "files", FS, ["filesystem.write_file", "filesystem.read_text_file", "filesystem.list_directory"]],
  ["only the best when the next are far below it", "sum", [hit("everything.get-sum", 6.6), hit("github.add_issue_comment", 2.9)], ["everything.get-sum"]],
  ["a deprecated tool when nothing else matched", "old", [hit("x.old_read", 3, "Deprecated.")], ["x.old_read"]],
  ["nothing for no hits", "anything", [], []],
];

describe("signedHits", () => {
  it.each(CASES)("signs %s", (_, query, hits, want) => {
    expect(signedHits(query, hits).map((i) => hits[i]?.id)).toEqual(want);
  });
});
