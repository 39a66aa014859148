// The harness rules of Appendix G ("Harness rules (both tasks)"), verbatim where the paper gives
// them. The harness appends harnessRules() to every task system prompt. Sentences marked "ours"
// fill the paper's "[...]" or replace messaging text when communication is off. The compact rules
// (promptStyle 'compact') are ours, not the paper's: the same facts in one or two sentences.

import type { PromptStyle } from '../task.js';

/** Notification rules, shown only to communicating agents (Appendix G, verbatim). */
export const NOTIFICATION_RULES =
  'While you are working, we will immediately notify you whenever another agent sends you a message, ' +
  'interrupting your current generation if needed. Notifications show unread-message counts by sender. ' +
  'If you have no unread-message notification, there is no need to check your inbox. Use read_messages ' +
  'when notified; do not repeatedly poll an empty inbox. You can continue reasoning or doing useful work ' +
  'while waiting for a notification.';

/** Idleness rules for communicating agents (Appendix G). */
export const IDLENESS_RULES =
  'A complete tool call runs immediately and you receive its result. ' +
  // ours: paper elides this sentence
  'Everything you generate, including reasoning, tool calls and messages, counts against your generation allowance. ' +
  'If you end a response without a tool call or final answer, you become idle: no tokens are spent while ' +
  'waiting, and a new peer message wakes you. If everyone is idle or finished, you will be asked for your ' +
  'final answer once. Do not repeat statements merely to keep yourself active.';

/** Idleness rules without communication: no peer message can wake an agent, so idling ends its work. */
export const IDLENESS_RULES_NO_COMMUNICATION =
  'A complete tool call runs immediately and you receive its result. ' +
  // ours: paper elides this sentence (messaging removed)
  'Everything you generate, including reasoning and tool calls, counts against your generation allowance. ' +
  // ours: replaces the idle-and-woken-by-a-message sentence, which is messaging text
  'If you end a response without a tool call or final answer, your work phase ends. ' +
  'If everyone is idle or finished, you will be asked for your final answer once.';

/** Compact harness rules with messaging (ours, not the paper's): notifications, reading, idleness. */
export const COMPACT_HARNESS_RULES =
  'Use read_messages when notified. If you end a response without a tool call, you become idle.';

/** Compact harness rules without messaging (ours, not the paper's). */
export const COMPACT_HARNESS_RULES_NO_COMMUNICATION = 'If you end a response without a tool call, your work phase ends.';

/** Options of harnessRules. */
export interface HarnessRulesOptions {
  /** Whether messaging is on. */
  readonly communication: boolean;
  /** The wording (default 'paper'). */
  readonly promptStyle?: PromptStyle;
}

/** The harness rules for an agent: notification rules (messaging only), then the idleness rules. */
export function harnessRules(options: HarnessRulesOptions): string {
  if (options.promptStyle === 'compact') {
    return options.communication ? COMPACT_HARNESS_RULES : COMPACT_HARNESS_RULES_NO_COMMUNICATION;
  }
  return options.communication ? `${NOTIFICATION_RULES}\n\n${IDLENESS_RULES}` : IDLENESS_RULES_NO_COMMUNICATION;
}
