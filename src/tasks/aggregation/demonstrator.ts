// The scripted aggregation agent: with messaging it broadcasts its own number once in the prompt's
// example wording, reads whenever notified, associates each received number with its sender (so a
// repeated message never duplicates an entry) and answers `#### [sorted list]` as soon as it has
// heard from all N − 1 teammates; otherwise it idles until a message wakes it. Asked for its final
// answer, it answers with what it knows. Its answering thought lists the numbers it collected in the
// order it learned them ("Collected: 7, 2, 9.") before the sorted list, so that writing the answer
// is a sort of a list in view rather than a search of the whole history. Without messaging it idles at once and, when asked,
// answers with its own number (the right answer only for a team of one).

import type { ContextItem, PromptItem } from '../../policy/context-item.js';
import type { ScriptedAction } from '../../policy/scripted/scripted-action.js';
import type { Script, ScriptedAgent, ScriptStartOptions } from '../../policy/scripted/scripted-policy.js';
import { numberToWords, wordsToNumber } from './number-words.js';

const OWN_NUMBER = /Your private number: ([a-z]+(?:[- ][a-z]+)?)\./i;
const DIGITS_IN_PARENTHESES = /\((\d{1,2})\)/;
const NUMBER_WORDS = /number is ([a-z]+(?:-[a-z]+)?)/i;

/** The broadcast of the aggregation prompt's example call, with the agent's own number. */
export function numberBroadcastText(value: number): string {
  return `My private number is ${numberToWords(value)} (${value}). Please share your own assignment.`;
}

/** The number a teammate's message states: "(42)" or "number is forty-two"; null when it states none. */
export function readStatedNumber(text: string): number | null {
  const digits = DIGITS_IN_PARENTHESES.exec(text);
  if (digits !== null) return Number(digits[1]);
  const words = NUMBER_WORDS.exec(text);
  return words === null ? null : wordsToNumber(words[1]);
}

function ownNumber(prompt: PromptItem): number {
  const match = OWN_NUMBER.exec(prompt.user);
  const value = match === null ? null : wordsToNumber(match[1]);
  if (value === null) throw new TypeError(`scripted aggregator ${prompt.agentName}: the first user turn states no private number`);
  return value;
}

class Aggregator implements ScriptedAgent {
  private readonly heard = new Map<string, number>();
  private broadcastSent = false;
  private unread = 0;
  private asked = false;

  constructor(
    private readonly own: number,
    private readonly communication: boolean,
    private readonly teammateCount: number,
  ) {}

  observe(item: ContextItem): void {
    if (item.kind === 'final_prompt') this.asked = true;
    if (item.kind === 'notification') this.unread = Object.values(item.unreadBySender).reduce((total, count) => total + count, 0);
    if (item.kind !== 'tool_result' || !item.ok) return;
    if (item.name === 'message') this.broadcastSent = true;
    if (item.name === 'read_messages') {
      this.unread = 0;
      for (const message of item.messages ?? []) {
        const value = readStatedNumber(message.text);
        if (value !== null && !this.heard.has(message.from)) this.heard.set(message.from, value);
      }
    }
  }

  decide(): ScriptedAction {
    if (this.asked) return this.answer(`Asked for the final answer; I know ${this.heard.size + 1} numbers.`);
    if (!this.communication) {
      return { kind: 'idle', thought: 'No messaging: I know only my own number.', text: 'Waiting to be asked for the final answer.' };
    }
    if (!this.broadcastSent) {
      return { kind: 'call', thought: 'Share my number with everyone.', name: 'message', arguments: { to: 'all', text: numberBroadcastText(this.own) } };
    }
    if (this.heard.size >= this.teammateCount) return this.answer(`I have one number from each of my ${this.teammateCount} teammates.`);
    if (this.unread > 0) return { kind: 'call', thought: 'I have unread messages; read them.', name: 'read_messages', arguments: {} };
    return {
      kind: 'idle',
      thought: `I have heard from ${this.heard.size} of ${this.teammateCount} teammates; wait for the rest.`,
      text: "Waiting for my teammates' numbers.",
    };
  }

  private answer(reason: string): ScriptedAction {
    const collected = [this.own, ...this.heard.values()];
    const sorted = collected.slice().sort((x, y) => x - y);
    return { kind: 'answer', thought: `${reason} Collected: ${collected.join(', ')}.`, answer: `[${sorted.join(', ')}]` };
  }
}

/** The scripted aggregation agent. */
export const aggregatorScript: Script = {
  name: 'aggregator',
  start(options: ScriptStartOptions): ScriptedAgent {
    const { prompt } = options;
    const communication = prompt.communication && prompt.toolNames.includes('message');
    return new Aggregator(ownNumber(prompt), communication, prompt.teammates.length);
  },
};
