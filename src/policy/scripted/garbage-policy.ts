// A policy that writes garbage, to prove that nothing a model writes can stop or crash an episode:
// each piece is, at random, uniformly random token ids (including ids past the vocabulary, which
// decode to U+FFFD), a soup of chat markers, JSON scraps, `####` lines and unicode, or (half of the
// pieces) a tool call that is nearly right: real and invented tool names, teammates, the agent
// itself, nonexistent agents, rooms it has seen, wrong argument types, broken JSON, a missing closing
// tag; one call in three is well formed, so messages, reads and moves really happen. Deterministic:
// each piece is drawn from an Rng keyed by the agent's seed and the sequence length. Log-probs are 0
// (it is not a distribution).

import type { JsonValue } from '../../common/json-dumps.js';
import { jsonDumps } from '../../common/json-dumps.js';
import { createRng, type Rng } from '../../common/random.js';
import type { Tokenizer } from '../../model/tokenizer/tokenizer.js';
import type { AgentSequence } from '../agent-sequence.js';
import type { GenerateOptions, GenerateResult, Policy } from '../policy.js';

/** Ids past the vocabulary that random pieces may draw (a model's embedding has padding rows). */
const OUT_OF_VOCABULARY_IDS = 64;
/** One random id in this many is a stop token, so pieces of random ids sometimes stop early. */
const STOP_ODDS = 200;
/** Most random ids one piece writes, so random pieces do not eat the whole allowance at once. */
const MAX_RANDOM_IDS = 256;

const FRAGMENTS = [
  '<think>', '</think>', '<tool_call>', '</tool_call>', '<|im_end|>', '<|endoftext|>', '<|im_start|>', '<tool_response>',
  '####', '#### [1, 2, 3]\n', '#### [', '{', '}', '[', ']', '"', ': ', ', ', '\n', ' ', '\t', 'null', 'true', '42',
  '{"name": ', '"arguments": ', '"message"', '"read_messages"', '"check_notifications"', '"move"', '"look"',
  '{"to": "all", "text": "hi"}', '{"room": 7}', 'é', '七十三', '\u0000', '\ud83d\ude00', 'forty-two', 'R0000',
];

const TOOL_NAMES = ['message', 'read_messages', 'check_notifications', 'move', 'look', 'fly', 'agent_3', ''];

/** Options of GarbagePolicy. */
export interface GarbagePolicyOptions {
  /** The tokenizer whose ids it draws and whose encoding it uses for text garbage. */
  readonly tokenizer: Tokenizer;
}

/** Writes deterministic garbage; see the file header. */
export class GarbagePolicy implements Policy {
  /** The tokenizer whose ids it writes. */
  readonly tokenizer: Tokenizer;

  /** A garbage writer over `tokenizer`'s vocabulary. */
  constructor(options: GarbagePolicyOptions) {
    this.tokenizer = options.tokenizer;
  }

  /** One piece of garbage, at most maxNew tokens, ending at the first stop id it happens to write. */
  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    if (options.signal?.aborted === true) return Promise.resolve({ tokens: [], logprobs: [], finish: 'cancelled' });
    const rng = createRng(`garbage/${String(options.seed)}/${sequence.length}`);
    const mode = rng.nextInt(4);
    const drawn =
      mode === 0 ? this.randomIds(rng, options) : this.tokenizer.encode(mode === 1 ? soup(rng) : nearCall(rng, sequence));
    const limit = Math.min(drawn.length, options.maxNew);
    let end = limit;
    for (let i = 0; i < limit; i += 1) {
      if (options.stopTokenIds.includes(drawn[i])) {
        end = i + 1;
        break;
      }
    }
    const tokens = drawn.slice(0, Math.max(end, 1));
    const stopped = options.stopTokenIds.includes(tokens[tokens.length - 1]);
    return Promise.resolve({ tokens, logprobs: new Array<number>(tokens.length).fill(0), finish: stopped ? 'stop' : 'length' });
  }

  private randomIds(rng: Rng, options: GenerateOptions): number[] {
    const count = 1 + rng.nextInt(Math.min(options.maxNew, MAX_RANDOM_IDS));
    const ids: number[] = [];
    for (let i = 0; i < count; i += 1) {
      ids.push(
        rng.nextInt(STOP_ODDS) === 0
          ? options.stopTokenIds[rng.nextInt(options.stopTokenIds.length)]
          : rng.nextInt(this.tokenizer.vocabSize + OUT_OF_VOCABULARY_IDS),
      );
    }
    return ids;
  }
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.nextInt(items.length)];
}

function soup(rng: Rng): string {
  const parts: string[] = [];
  const count = 1 + rng.nextInt(40);
  for (let i = 0; i < count; i += 1) parts.push(pick(rng, FRAGMENTS));
  return parts.join('');
}

/** Names and rooms the agent has seen, so some garbage calls are valid and act on the episode. */
function seenWords(sequence: AgentSequence): { names: string[]; rooms: string[] } {
  const names = ['all', 'agent_99', 'nobody'];
  const rooms = ['R1'];
  for (const item of sequence.context) {
    if (item.kind === 'prompt') names.push(item.agentName, ...item.teammates);
    const text = item.kind === 'prompt' ? item.user : item.kind === 'tool_result' ? item.output : '';
    for (const match of text.matchAll(/R\d+/g)) rooms.push(match[0]);
  }
  return { names, rooms };
}

function nearCall(rng: Rng, sequence: AgentSequence): string {
  const { names, rooms } = seenWords(sequence);
  const candidates: JsonValue[] = [pick(rng, names), pick(rng, rooms), 7, null, ['all'], { to: 'all' }, soup(rng)];
  const args: Record<string, JsonValue> = {};
  const keys = ['to', 'text', 'room', 'limit'];
  const count = rng.nextInt(4);
  for (let i = 0; i < count; i += 1) args[pick(rng, keys)] = pick(rng, candidates);
  if (rng.nextInt(2) === 0) args.to = pick(rng, names);
  if (rng.nextInt(2) === 0) args.room = pick(rng, rooms);
  // One call in three is well formed and acts on the episode: messages wake teammates, moves move.
  const valid: JsonValue[] = [
    { name: 'message', arguments: { to: pick(rng, names), text: soup(rng) } },
    { name: 'read_messages', arguments: {} },
    { name: 'check_notifications', arguments: {} },
    { name: 'move', arguments: { room: pick(rng, rooms) } },
  ];
  const body = jsonDumps(rng.nextInt(3) === 0 ? pick(rng, valid) : { name: pick(rng, TOOL_NAMES), arguments: args });
  // Sometimes break the JSON, drop the closing tag, or write the call inside reasoning.
  const broken = rng.nextInt(4) === 0 ? body.slice(0, rng.nextInt(body.length + 1)) : body;
  const call = `<tool_call>\n${broken}\n${rng.nextInt(5) === 0 ? '' : '</tool_call>'}`;
  return rng.nextInt(6) === 0 ? `<think>\n${call}` : `<think>\nhm\n</think>\n\n${call}`;
}
