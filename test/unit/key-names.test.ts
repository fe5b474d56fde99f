// API keys named like members of Object.prototype (constructor, toString) are ordinary names: they
// can be configured, and their scopes are what keyScopes lists for them, or every scope.

import { describe, expect, it } from "vitest";
import { SCOPES, loadConfig, scopesOfKey } from "../../src/config/index.js";

describe("API key names", () => {
  it("a key named constructor is accepted and has every scope unless keyScopes lists it; toString gets only its listed scope", () => {
    const config = loadConfig({
      SANDBOX_DIR: "/tmp/sandgate-key-names",
      SANDGATE_API_KEYS: "constructor:ctor-key-0123456789ab,toString:tos-key-0123456789ab",
      SANDGATE_KEY_SCOPES: "toString:audit",
    });
    expect(Object.keys(config.server.apiKeys)).toEqual(["constructor", "toString"]);
    expect([...scopesOfKey(config.server, "constructor")].sort()).toEqual([...SCOPES].sort());
    expect([...scopesOfKey(config.server, "toString")]).toEqual(["audit"]);
    expect([...scopesOfKey(config.server, "valueOf")].sort()).toEqual([...SCOPES].sort());
  });
});
