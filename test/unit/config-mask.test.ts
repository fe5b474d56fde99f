// What counts as a secret in an upstream's args and URL: a table of what is masked and what,
// just as important, is left readable (ports, paths, package names, counts).

import { describe, expect, it } from "vitest";
import { loadConfig, maskSecrets, maskText, maskUrl, secretList, serverSecretValues, upstreamServerSchema } from "../../src/config/index.js";

const M = "********";

/** The args as `config --print` shows them, and the values masked in free text. */
function args(list: string[]): { shown: string[]; secrets: string[] } {
  const server = upstreamServerSchema.parse({ command: "node", args: list });
  const masked = maskSecrets({ ...loadConfig({ SANDBOX_DIR: "/tmp/sandgate-mask-test" }), mcpServers: { s: server } });
  const shown = masked.mcpServers.s;
  return { shown: shown && "args" in shown ? shown.args : [], secrets: serverSecretValues(server) };
}

describe("secrets in args", () => {
  it.each([
    [["--token", "abcd1234"], ["--token", M]],
    [["--api-key", "abcd1234"], ["--api-key", M]],
    [["--apikey=abcd1234"], [`--apikey=${M}`]],
    [["--password", "hunter22"], ["--password", M]],
    [["--client-secret", "abcd1234"], ["--client-secret", M]],
    [["--auth", "user:pass"], ["--auth", M]],
    [["API_KEY=abcd1234", "GITHUB_TOKEN=abcd1234"], [`API_KEY=${M}`, `GITHUB_TOKEN=${M}`]],
    [["ghp_0123456789abcdefghijABCDEFGHIJ"], [M]],
    [["github_pat_0123456789abcdefghij_ABCDEFGHIJ"], [M]],
    [["sk-ant-api03-0123456789abcdefABCDEF"], [M]],
    [["xoxb-123456789012-abcdefABCDEF"], [M]],
    [["AKIAIOSFODNN7EXAMPLE"], [M]],
    [["--header", "Authorization: Bearer abcdef0123456789"], ["--header", `Authorization: Bearer ${M}`]],
    [["Zx8kQ2mN7pL4vR9tW3yB6cD1fG5hJ0"], [M]],
    [["--url", "https://u:p4ssw0rd@example.com/sse?key=abcd1234"], ["--url", `https://example.com/sse?key=${M}`]],
  ])("masks %j", (input, shown) => {
    expect(args(input).shown).toEqual(shown);
    for (const value of args(input).secrets) expect(JSON.stringify(args(input).shown)).not.toContain(value);
  });

  it.each([
    [["-y", "@modelcontextprotocol/server-github"]],
    [["--port", "8080", "-p", "3000"]],
    [["--max-tokens", "1000", "--token-file", "/run/secrets/token"]],
    [["/tmp/sandgate-upstream-Ab12Cd", "/home/user/project-2024"]],
    [["server_everything_version2024", "550e8400-e29b-41d4-a716-446655440000"]],
    [["NODE_ENV=production", "--verbose"]],
  ])("leaves %j readable", (input) => {
    expect(args(input)).toEqual({ shown: input, secrets: [] });
  });
});

describe("secrets in URLs", () => {
  it("drops userinfo and masks every query value and the fragment", () => {
    expect(maskUrl("https://user:pw@api.example.com:8443/mcp?api_key=abc&x=1#frag")).toBe(`https://api.example.com:8443/mcp?api_key=${M}&x=${M}#${M}`);
    expect(maskUrl("http://127.0.0.1:3000/mcp")).toBe("http://127.0.0.1:3000/mcp");
  });

  it("adds the secret parts, not every value, to what free text is masked with", () => {
    const server = upstreamServerSchema.parse({ url: "https://TOKEN1234@api.example.com/mcp?access_token=tok-5678&format=json#frag9" });
    expect(secretList(serverSecretValues(server))).toEqual(expect.arrayContaining(["TOKEN1234", "tok-5678", "frag9"]));
    expect(serverSecretValues(server)).not.toContain("json");
    expect(maskText("GET /mcp?access_token=tok-5678 as TOKEN1234", secretList(serverSecretValues(server)))).toBe(`GET /mcp?access_token=${M} as ${M}`);
  });
});
