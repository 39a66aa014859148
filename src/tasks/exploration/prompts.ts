// The exploration prompts of Appendix G: the shared collaboration prompt, the task rules verbatim,
// the agent's name and teammates, and the allowance sentence with the numbers of the run. Without
// communication the collaboration prompt and teammate list are replaced by the paper's independence
// line and the messaging clauses of the rules are removed (the replacement last sentence is ours).
// The first user turn is ours: the paper says only that it gives the task and the start observation.
// The compact style (promptStyle 'compact', for the CPU preset) is ours, not the paper's: no
// collaboration prompt, the rules in three sentences, the same name line and first user turn, and an
// allowance sentence without the context window. Measured with the s3-mini tokenizer at N = 4 (compact
// tools and harness rules), an agent's opening prompt is 507 tokens with messaging against 1,207 for
// the paper's, and 339 against 609 without; the chat template's tools block is 344 of the 507.

import type { PromptStyle } from '../task.js';
import { COLLABORATION_PROMPT } from '../prompts/collaboration.js';

const RULES_OPENING =
  'You are exploring a maze of rooms connected by doors to find the exit. Use native tools: move(room) walks ' +
  'through a door of your current room into the named adjacent room and shows what you see there; look() ' +
  'describes your current room again. Only the doors listed for your current room are reachable in one move; to ' +
  'go back, move to the room you arrived from. Every teammate has the same layout and starts in the same room, ' +
  'but each agent has its own private position. A room whose only door leads back is a dead end. Room names ' +
  'carry no information about where the exit is. Keep track of the rooms you have visited and the doors you have ' +
  'not tried yet, so you do not repeat paths. Reaching the exit solves the task for the whole team and ends the ' +
  'episode.';

/** The task rules with messaging (Appendix G, verbatim). */
export const EXPLORATION_RULES =
  `${RULES_OPENING} There is no limit on moves or messages; only your token allowance limits how much you ` +
  'explore, so keep each step short. If you end a response without a tool call, you wait until a partner sends ' +
  'you a message.';

/** The task rules without messaging: "or messages" removed, and the waiting sentence replaced (ours). */
export const EXPLORATION_RULES_NO_COMMUNICATION =
  `${RULES_OPENING} There is no limit on moves; only your token allowance limits how much you explore, so keep ` +
  'each step short. If you end a response without a tool call, your exploration ends.';

/** The compact task rules (ours, not the paper's), with or without messaging. */
export const COMPACT_EXPLORATION_RULES =
  'You are exploring a maze of rooms connected by doors to find the exit. Every agent starts in the same room ' +
  'but has its own private position. Reaching the exit solves the task for the whole team.';

/** The compact allowance sentence (ours, not the paper's): the generation allowance only. */
export function compactAllowanceSentence(options: Pick<ExplorationSystemPromptOptions, 'workAllowance'>): string {
  return `Your generation allowance is ${options.workAllowance} tokens.`;
}

/** The compact independence line without messaging (ours, not the paper's). */
export const COMPACT_INDEPENDENT_EXPLORATION_LINE = 'You explore independently, without messaging.';

/** Replaces the collaboration prompt and teammate list without communication (Appendix G, verbatim). */
export const INDEPENDENT_EXPLORATION_LINE = 'You explore independently. No messaging or shared notes are available.';

/** Options of explorationSystemPrompt. */
export interface ExplorationSystemPromptOptions {
  /** Whether messaging is on. */
  readonly communication: boolean;
  /** The agent's name and teammates (Roster.introduction; name only without messaging). */
  readonly introduction: string;
  /** Tokens the agent may generate. */
  readonly workAllowance: number;
  /** The agent's context window in tokens. */
  readonly contextLimit: number;
  /** The wording (default 'paper'). */
  readonly promptStyle?: PromptStyle;
}

/** The allowance sentence of Appendix G with the run's numbers. */
export function allowanceSentence(options: Pick<ExplorationSystemPromptOptions, 'workAllowance' | 'contextLimit'>): string {
  return (
    `Your generation allowance is ${options.workAllowance} tokens; your context window is ${options.contextLimit} ` +
    'tokens, including observations.'
  );
}

/**
 * The system prompt: collaboration prompt (or independence line), rules, name and teammates, allowance.
 * Compact (ours): rules, name and teammates, allowance; the compact independence line leads without messaging.
 */
export function explorationSystemPrompt(options: ExplorationSystemPromptOptions): string {
  if (options.promptStyle === 'compact') {
    const parts = options.communication
      ? [COMPACT_EXPLORATION_RULES, options.introduction, compactAllowanceSentence(options)]
      : [COMPACT_INDEPENDENT_EXPLORATION_LINE, COMPACT_EXPLORATION_RULES, options.introduction, compactAllowanceSentence(options)];
    return parts.join('\n\n');
  }
  const parts = options.communication
    ? [COLLABORATION_PROMPT, EXPLORATION_RULES, options.introduction, allowanceSentence(options)]
    : [INDEPENDENT_EXPLORATION_LINE, EXPLORATION_RULES_NO_COMMUNICATION, options.introduction, allowanceSentence(options)];
  return parts.join('\n\n');
}

/** The first user turn (ours): the task and the observation of the start room. */
export function explorationFirstUserMessage(startObservation: string): string {
  return `Solve this problem with your team: find the exit of the maze. You are in the start room:\n${startObservation}`;
}
