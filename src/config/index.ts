// Public surface of the config module.
export { loadConfig, validateConfig } from "./env.js";
export { configSchema, flavorSchema, limitsSchema, LANGUAGES, FLAVOR_NAMES } from "./schema.js";
export type { SandgateConfig, Limits, Flavor, FlavorName, Language } from "./schema.js";
