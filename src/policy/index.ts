// The policy layer's public surface: the Policy interface, the agent token history it reads, and the
// scripted policies (Appendix L explorers, aggregation agents, garbage).

export { AgentSequence, TOKEN_ROLE_CODE, TOKEN_ROLES } from './agent-sequence.js';
export type { AgentSequenceOptions, ContextAppend, PieceRecord, SampledAppend, TokenRole } from './agent-sequence.js';
export type { ContextItem, FinalPromptItem, NotificationItem, PromptItem, ReceivedMessage, ToolResultItem } from './context-item.js';
export { MAX_PIECE_TOKENS } from './policy.js';
export type { GenerateFinish, GenerateOptions, GenerateResult, Policy, SampledDraws } from './policy.js';
export { PolicyError } from './policy-error.js';
export { StretchEncoder } from './stretch-encoder.js';
export type { EncodedStretch, StretchEncoderOptions } from './stretch-encoder.js';
export { aggregatorScript, numberBroadcastText, readStatedNumber } from './scripted/aggregator.js';
export { branchKey, claimText, readExplorerNews, reportText } from './scripted/explorer-messages.js';
export type { BranchName, ExplorerNews } from './scripted/explorer-messages.js';
export { explorerScript } from './scripted/explorer.js';
export { GarbagePolicy } from './scripted/garbage-policy.js';
export type { GarbagePolicyOptions } from './scripted/garbage-policy.js';
export { renderAction } from './scripted/scripted-action.js';
export type { ScriptedAction } from './scripted/scripted-action.js';
export { ScriptedPolicy } from './scripted/scripted-policy.js';
export type { Script, ScriptedAgent, ScriptedPolicyOptions, ScriptStartOptions } from './scripted/scripted-policy.js';
