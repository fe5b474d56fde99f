// search_tools' full text from generated signatures (compactSignatures): titles that repeat the
// name, @default tags, one-line doc comments, and tools without an output schema.

import { describe, expect, it } from "vitest";
import { compactSignatures } from "../../src/features/codemode/signature-text.js";

const screenshot = [
  "/** Input of `puppeteer.puppeteer_screenshot`. */",
  "export interface PuppeteerScreenshotInput {",
  "  /**",
  "   * Number of results (1-20, default 5)",
  "   *",
  "   * @default 5",
  "   */",
  "  count?: number;",
  "  /**",
  "   * Width in pixels",
  "   *",
  "   * @default 800",
  "   */",
  "  width?: number;",
  "  /**",
  "   * If true, capture the screenshot as a base64-encoded data URI (as text) instead of binary image content. Default false.",
  "   */",
  "  encoded?: boolean;",
  "}",
  "",
  "/** The server declares no output schema: the result is whatever the tool returns. */",
  "export type PuppeteerScreenshotOutput = unknown;",
  "",
  "/**",
  " * Puppeteer Screenshot Tool",
  " *",
  " * Take a screenshot of the current page",
  " *",
  " * Tool id: `puppeteer.puppeteer_screenshot`",
  " */",
  "export declare function puppeteerScreenshot(input: PuppeteerScreenshotInput): Promise<PuppeteerScreenshotOutput>;",
  "",
].join("\n");

const thinking = [
  "/** Input of `sequential-thinking.sequentialthinking`. */",
  "export interface SequentialthinkingInput {",
  "  thought: string;",
  "}",
  "",
  "/** Output of `sequential-thinking.sequentialthinking`. */",
  "export interface SequentialthinkingOutput {",
  "  thought: string;",
  "}",
  "",
  "/**",
  " * Sequential Thinking",
  " *",
  " * A tool for problem-solving.",
  " * Each thought can build on earlier ones.",
  " *",
  " * Tool id: `sequential-thinking.sequentialthinking`",
  " */",
  "export declare function sequentialthinking(input: SequentialthinkingInput): Promise<SequentialthinkingOutput>;",
].join("\n");

const titled = [
  "export interface SearchInput {",
  "  q: string;",
  "}",
  "",
  "/**",
  " * Search GitHub Code",
  " *",
  " * Find text in files.",
  " */",
  "export declare function search(input: SearchInput): Promise<unknown>;",
].join("\n");

describe("compactSignatures", () => {
  it("writes a tool's declarations without boilerplate, a repeated title, @default tags said twice, or an empty output type", () => {
    const [text] = compactSignatures([{ signature: screenshot, python: "async def puppeteer_screenshot(args: Optional[PuppeteerScreenshotInput] = None, /, **kwargs: Any) -> PuppeteerScreenshotOutput" }]);
    expect(text).toBe(
      [
        "interface PuppeteerScreenshotInput {",
        "  /** Number of results (1-20, default 5) */",
        "  count?: number;",
        "  /** Width in pixels (default 800) */",
        "  width?: number;",
        "  /** If true, capture the screenshot as a base64-encoded data URI (as text) instead of binary image content. Default false. */",
        "  encoded?: boolean;",
        "}",
        "/** Take a screenshot of the current page */",
        "declare function puppeteerScreenshot(input: PuppeteerScreenshotInput): Promise<unknown>; // Python: await puppeteer_screenshot(**input)",
      ].join("\n"),
    );
  });

  it("drops a title made of the name's words even without a hump between them, keeps one that adds words, and prints an identical type once", () => {
    const [first, second] = compactSignatures([{ signature: thinking }, { signature: titled, python: "def search(q)" }]);
    expect(first).toContain("type SequentialthinkingOutput = SequentialthinkingInput;");
    expect(first).toMatch(/^\/\*\*\n \* A tool for problem-solving\.\n \* Each thought can build on earlier ones\.\n \*\/\ndeclare function sequentialthinking\(/m);
    expect(first).not.toContain("Sequential Thinking");
    expect(second).toContain("/**\n * Search GitHub Code\n *\n * Find text in files.\n */");
    // A Python line the generator did not write as `async def name(` stays whole.
    expect(second).toMatch(/declare function search\(input: SearchInput\): Promise<unknown>;\n# Python: def search\(q\)$/);
  });
});
