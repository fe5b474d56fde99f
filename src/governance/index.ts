// Left behind by the move of governance to src/features/governance, for src/codemode/discovery.ts
// alone (being changed elsewhere); delete once it imports toolPolicyFor from there.
export { toolPolicyFor } from "../features/governance/index.js";
