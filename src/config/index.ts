// Public surface of the config module.
export { loadConfig } from "./env.js";
export type { LoadConfigOptions } from "./env.js";
export { defaultConfig, declaredSettings, envSettings, CONFIG_FILE_VARIABLE } from "./settings.js";
export type { DeclaredSetting, EnvSetting } from "./settings.js";
export { configJsonSchema } from "./json-schema.js";
export { settingsTable } from "./settings-table.js";
export { CONFIG_FILE_NAME, locateConfigFile } from "./locate.js";
export type { ConfigLocation } from "./locate.js";
export { validateConfig } from "./validate.js";
export { envSecretValues, maskSecrets, maskText, maskUrl, secretList, serverSecretValues, upstreamSecretValues, SECRET_MASK } from "./mask.js";
export { configSchema, defaultTimeoutS, flavorSchema, limitsSchema, serverSchema, volumeSchema, isLoopbackHost, allApiKeys, scopesOfKey, SCOPES, upstreamServerSchema, codeModeSchema, approvalsSchema, toolPolicySchema, LANGUAGES, FLAVOR_NAMES, TOOL_PROFILES } from "./schema.js";
export type { SandgateConfig, Limits, Flavor, FlavorName, Language, ServerConfig, VolumeConfig, UpstreamServerConfig, StdioServerConfig, HttpServerConfig, CodeModeConfig, SecurityConfig, Scope, ApprovalsConfig, ToolPolicyConfig } from "./schema.js";
export { TOOL_ACTIONS } from "./tool-policy.js";
export type { ToolAction } from "./tool-policy.js";
export type { AnomaliesConfig, MetricsConfig, PiiConfig, ToolProfile } from "./schema.js";
export { ACTIONS, CATEGORIES, RISK_LEVELS, SECURITY_LEVELS, SEVERITIES } from "./security-terms.js";
export type { Action, Category, RiskLevel, SecurityLevel, Severity } from "./security-terms.js";
