// The policy layer's public surface: the Policy interface, the agent token history it reads, and the
// scripted policies (a Script run as a policy, garbage). The tasks' own scripted demonstrators (the
// aggregation agents, Appendix L's explorers) live beside their tasks, in tasks/.

export { AgentSequence, TOKEN_ROLE_CODE, TOKEN_ROLES } from './agent-sequence.js';
export type { AgentSequenceOptions, ContextAppend, PieceRecord, SampledAppend, TokenRole } from './agent-sequence.js';
export type { ContextItem, FinalPromptItem, NotificationItem, PromptItem, ReceivedMessage, ToolResultItem } from './context-item.js';
export { MAX_PIECE_TOKENS } from './policy.js';
export type { GenerateFinish, GenerateOptions, GenerateResult, Policy, SampledDraws } from './policy.js';
export { PolicyError } from './policy-error.js';
export { StretchEncoder } from './stretch-encoder.js';
export type { EncodedStretch, StretchEncoderOptions } from './stretch-encoder.js';
export { GarbagePolicy } from './scripted/garbage-policy.js';
export type { GarbagePolicyOptions } from './scripted/garbage-policy.js';
export { renderAction } from './scripted/scripted-action.js';
export type { ScriptedAction } from './scripted/scripted-action.js';
export { ScriptedPolicy } from './scripted/scripted-policy.js';
export type { Script, ScriptedAgent, ScriptedPolicyOptions, ScriptStartOptions } from './scripted/scripted-policy.js';
