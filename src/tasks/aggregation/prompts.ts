// The aggregation prompts of Appendix G, verbatim for the paper's settings (straight apostrophes for
// the PDF's curly ones), with the count words following N ("Each of four agents" becomes "Each of
// eight agents"). Sentences marked "ours" fill the paper's "[...]", the parts it describes without
// wording, the singular forms for N = 1, and the communication-off variants. Without communication
// the messaging sentences are removed, the guidance part is replaced by an independence line modelled
// on exploration's, the teammate list and the example calls are dropped; a lone agent then cannot
// learn the others' numbers, and the population succeeds if any agent answers correctly.
//
// The compact style (promptStyle 'compact', for the CPU preset) is ours, not the paper's: each compact
// text sits after its paper counterpart and keeps its facts (N in words, the private number, the final
// format) in fewer words, with no guidance part, no reward paragraph beyond one sentence and no example
// calls; the agent's name and teammates open the first user turn instead of closing the system prompt,
// so all agents of a team size share the system turn token for token (the trainer computes it once per
// micro-batch). The final prompt is the same in both styles. Measured with the s3-mini tokenizer at N = 4, an
// agent's whole opening prompt (system turn with tools and harness rules, first user turn, generation
// prompt) is 375 tokens with messaging against 1,007 for the paper's, and 123 against 324 without. With
// messaging 242 of the 375 are the chat template's tools block for the three messaging tools and 25 the
// name line, so no wording of the prose brings it under 300 tokens.

import type { PromptStyle } from '../task.js';
import { capitalizedNumberWords, numberToWords } from './number-words.js';

/** The counted phrases of the prompts for a team of N agents. */
interface CountPhrases {
  /** "Each of four agents" (N = 1: "One agent", ours). */
  readonly eachOfAgents: string;
  /** "Four agents each have" (N = 1: "One agent has", ours). */
  readonly agentsEachHave: string;
  /** "all four assigned numbers" (N = 1: "the one assigned number", ours). */
  readonly allAssignedNumbers: string;
  /** "all four agents'" (N = 1: "the one agent's", ours). */
  readonly allAgentsPossessive: string;
  /** "four integers" (N = 1: "one integer"). */
  readonly integers: string;
}

function countPhrases(agentCount: number): CountPhrases {
  const words = numberToWords(agentCount);
  if (agentCount === 1) {
    return {
      eachOfAgents: 'One agent',
      agentsEachHave: 'One agent has',
      allAssignedNumbers: 'the one assigned number',
      allAgentsPossessive: "the one agent's",
      integers: 'one integer',
    };
  }
  return {
    eachOfAgents: `Each of ${words} agents`,
    agentsEachHave: `${capitalizedNumberWords(agentCount)} agents each have`,
    allAssignedNumbers: `all ${words} assigned numbers`,
    allAgentsPossessive: `all ${words} agents'`,
    integers: `${words} integers`,
  };
}

/** Settings the aggregation system prompt depends on. */
export interface AggregationPromptOptions {
  /** N, the team size. */
  readonly agentCount: number;
  /** Whether messaging is on. */
  readonly communication: boolean;
  /** λ of the token cost stated in the prompt; 0 states that there is no length reward. */
  readonly tokenCostWeight: number;
}

/** Part one: the task statement, with the token-cost sentences when tokenCostWeight > 0. */
export function aggregationTaskStatement(options: AggregationPromptOptions): string {
  const counts = countPhrases(options.agentCount);
  const sentences = [
    'You are in a team solving a private-information number sorting task.',
    `${counts.eachOfAgents} receives one English-written number.`,
    'You initially know only your own number.',
  ];
  if (options.communication) {
    sentences.push(
      "Share your actual assignment, explicitly read partners' messages, and associate each received number with " +
        'its sender so repeated messages do not create duplicates.',
    );
  }
  sentences.push(
    'Collect one number per agent and sort by numeric value, retaining equal values from different agents.',
    'Every agent can submit the full list.',
  );
  const rewardClause = 'The team earns reward if at least one final answer is correct';
  if (options.tokenCostWeight > 0) {
    // Without communication the message-count clause is messaging text and is removed (ours).
    sentences.push(options.communication ? `${rewardClause}; there is no message-count reward.` : `${rewardClause}.`);
    sentences.push(
      `Successful rewards are reduced by at most ${String(options.tokenCostWeight)}, in proportion to the tokens all ` +
        "agents generated divided by the team's total generation allowance.",
      'Failures pay no token cost, and a correct answer always earns more than a failure.',
    );
  } else {
    // Token cost off (Appendix G); without communication "message-count or" is removed (ours).
    sentences.push(
      options.communication
        ? `${rewardClause}; there is no message-count or length reward.`
        : `${rewardClause}; there is no length reward.`,
    );
  }
  return sentences.join(' ');
}

/** The compact task statement (ours, not the paper's): the task in two sentences, the reward in one. */
export function compactAggregationTaskStatement(options: AggregationPromptOptions): string {
  const counts = countPhrases(options.agentCount);
  const reward =
    options.tokenCostWeight > 0
      ? 'The team earns reward if any final answer is correct, reduced by the tokens generated.'
      : 'The team earns reward if any final answer is correct.';
  return [
    `${counts.eachOfAgents} has one private number.`,
    'Collect one number per agent and sort them, keeping equal values from different agents.',
    reward,
  ].join(' ');
}

/** Part two with messaging: general guidance on communication (Appendix G). */
export const COMMUNICATION_GUIDANCE =
  'Agents work toward the same team objective; no specialist roles are assigned by the harness. A task may give ' +
  'you private information that partners do not know. Work independently when useful. Communicate when you have ' +
  'information, checked evidence, a counterexample, a correction, or a specific question that may change a ' +
  "teammate's next step. Distinguish verified facts from guesses. Read replies explicitly; sending does not read " +
  'messages. Teammate names are recipients of message, never function names. Use one recipient or all. Do not ' +
  'count repeated claims as independent verification. If evidence conflicts, compare the underlying reasoning. ' +
  // ours: paper elides this sentence
  "Change your conclusion when a partner's checked evidence shows it was wrong, and say so. " +
  'Submit your own checked answer when asked. Examples are hypothetical and contain no evidence about the ' +
  'current problem.';

/** Part two without messaging (ours, modelled on exploration's "You explore independently..." line). */
export const INDEPENDENT_WORK_LINE = 'You work independently. No messaging or shared notes are available.';

/** The compact independence line without messaging (ours, not the paper's). */
export const COMPACT_INDEPENDENT_WORK_LINE = 'You work independently, without messaging.';

/** Part three: the shared reward (Appendix G). */
export const SHARED_REWARD_STATEMENT =
  'All participating agents share the same reward if at least one agent active at the end submits a correct ' +
  'answer. ' +
  // ours: paper elides this sentence
  "A wrong or missing answer from one agent does not cancel a teammate's correct answer. " +
  'There is no individual-correctness bonus.';

/** Part five: the two example tool calls of Appendix G (a broadcast and read_messages); the lead-in is ours. */
export const EXAMPLE_TOOL_CALLS =
  'Example tool calls:\n' +
  '<tool_call>\n' +
  '{"name": "message", "arguments": {"to": "all", "text": "My private number is forty-two (42). Please share your own assignment."}}\n' +
  '</tool_call>\n' +
  '<tool_call>\n' +
  '{"name": "read_messages", "arguments": {}}\n' +
  '</tool_call>';

/** Options of aggregationSystemPrompt. */
export interface AggregationSystemPromptOptions extends AggregationPromptOptions {
  /** Part four: the agent's name and teammates (Roster.introduction). */
  readonly introduction: string;
  /** The wording (default 'paper'). */
  readonly promptStyle?: PromptStyle;
}

/**
 * The five-part system prompt; without messaging four parts: the independence line replaces the
 * guidance, no examples. Compact (ours): the compact task statement, followed without messaging by
 * the compact independence line; no example calls. The name and teammates open the compact first
 * user turn instead, so every agent of a team size has the same system turn (tools block included)
 * and the trainer and engine share its tokens across agents (native/train/shared_prefixes.h).
 */
export function aggregationSystemPrompt(options: AggregationSystemPromptOptions): string {
  if (options.promptStyle === 'compact') {
    const parts = options.communication
      ? [compactAggregationTaskStatement(options)]
      : [compactAggregationTaskStatement(options), COMPACT_INDEPENDENT_WORK_LINE];
    return parts.join('\n\n');
  }
  const parts = options.communication
    ? [aggregationTaskStatement(options), COMMUNICATION_GUIDANCE, SHARED_REWARD_STATEMENT, options.introduction, EXAMPLE_TOOL_CALLS]
    : [aggregationTaskStatement(options), INDEPENDENT_WORK_LINE, SHARED_REWARD_STATEMENT, options.introduction];
  return parts.join('\n\n');
}

/** Options of aggregationFirstUserMessage. */
export interface AggregationFirstUserMessageOptions {
  /** N, the team size. */
  readonly agentCount: number;
  /** Whether messaging is on. */
  readonly communication: boolean;
  /** This agent's private number. */
  readonly privateNumber: number;
  /** The wording (default 'paper'). */
  readonly promptStyle?: PromptStyle;
  /** The agent's name and teammates (Roster.introduction): the compact turn's opening paragraph; the paper's has it in the system prompt. */
  readonly introduction?: string;
}

/** The first user turn (Appendix G); without messaging the "through communication" and "unless you tell them" clauses go. */
export function aggregationFirstUserMessage(options: AggregationFirstUserMessageOptions): string {
  if (options.promptStyle === 'compact') return compactAggregationFirstUserMessage(options);
  const counts = countPhrases(options.agentCount);
  const find = options.communication
    ? `Find ${counts.allAssignedNumbers} through communication and return their numeric values in ascending order.`
    : `Find ${counts.allAssignedNumbers} and return their numeric values in ascending order.`;
  const knowledge = options.communication
    ? 'You know only your own assignment; other agents do not know it unless you tell them.'
    : 'You know only your own assignment.';
  return [
    `Solve this problem with your team: ${counts.agentsEachHave} one private number, written in English.`,
    find,
    'Include duplicates once per owning agent.',
    knowledge,
    `Final format: #### followed by a JSON array of ${counts.integers}.`,
    `Your private number: ${numberToWords(options.privateNumber)}.`,
  ].join(' ');
}

/** The compact first user turn (ours, not the paper's): the name and teammates, then the same facts in fewer words. */
function compactAggregationFirstUserMessage(options: AggregationFirstUserMessageOptions): string {
  const counts = countPhrases(options.agentCount);
  const find = options.communication ? [`Find ${counts.allAssignedNumbers} through messages.`] : [];
  const task = [
    `${counts.agentsEachHave} one private number, written in English.`,
    ...find,
    `Final format: #### followed by a JSON array of ${counts.integers} in ascending order.`,
    `Your private number: ${numberToWords(options.privateNumber)}.`,
  ].join(' ');
  return options.introduction === undefined ? task : `${options.introduction}\n\n${task}`;
}

/** Options of aggregationFinalPrompt. */
export interface AggregationFinalPromptOptions {
  /** N, the team size. */
  readonly agentCount: number;
  /** Whether messaging is on; without it the "messaging phase has ended" sentence is dropped. */
  readonly communication: boolean;
}

/** The final-phase request of Appendix F with the count following N. */
export function aggregationFinalPrompt(options: AggregationFinalPromptOptions): string {
  const counts = countPhrases(options.agentCount);
  const request =
    `Submit the sorted list of ${counts.allAgentsPossessive} numbers now. Reply with one line: #### followed by a ` +
    `JSON array of ${counts.integers} in ascending order, retaining duplicates.`;
  return options.communication ? `${request} The messaging phase has ended.` : request;
}
