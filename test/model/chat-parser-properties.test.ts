// Property tests of the response parser and tool validation: thousands of random strings,
// mutated valid calls and every truncation of a valid response. Neither may ever throw, every
// result must be well formed, and an unmutated valid call must be recovered exactly.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDumps, toolErrorOutput, validateToolCall } from '../../src/common/index.js';
import type { JsonValue, ToolCallError, ToolCallErrorKind, ToolSpec } from '../../src/common/index.js';
import { parseAssistantResponse, renderToolCall } from '../../src/model/chat/index.js';
import type { ParsedResponse, PieceFinish } from '../../src/model/chat/index.js';

const ERROR_KINDS: readonly ToolCallErrorKind[] = [
  'empty_call', 'invalid_json', 'not_an_object', 'missing_name', 'invalid_name', 'invalid_arguments', 'unexpected_field',
  'nested_call', 'unmatched_close', 'call_in_thinking', 'cut_off', 'unknown_tool', 'missing_argument', 'unexpected_argument', 'wrong_type',
];
const MARKERS = ['<think>', '</think>', '<tool_call>', '</tool_call>', '<|im_end|>', '<|endoftext|>'];
const FRAGMENTS = [...MARKERS, '<tool_response>', '####', '{', '}', '[', ']', '"', ':', ',', '\\', '\n', ' ', '"name"', '"arguments"', '"message"', 'null', '7', '\uFFFD', '\u0000'];

const tools: ToolSpec[] = [
  {
    name: 'message',
    description: 'Send.',
    parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'], additionalProperties: false },
  },
  { name: 'read_messages', description: 'Read.', parameters: { type: 'object', properties: {}, additionalProperties: false } },
  {
    name: 'record',
    description: 'Typed.',
    parameters: {
      type: 'object',
      properties: { count: { type: 'integer' }, weight: { type: 'number' }, final: { type: 'boolean' }, numbers: { type: 'array', items: { type: 'integer' } } },
      required: ['count'],
      additionalProperties: false,
    },
  },
];
const FINISHES: readonly PieceFinish[] = ['tool_call', 'end', 'length', 'context'];

const finishArb = fc.constantFrom(...FINISHES);
const noMarker = (text: string) => MARKERS.every((marker) => !text.includes(marker));
const freeText = fc.string({ unit: 'binary', maxLength: 40 }).filter(noMarker);
const fragmentText = fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 40 }).map((parts) => parts.join(''));

const callArb: fc.Arbitrary<{ name: string; arguments: Record<string, JsonValue> }> = fc.oneof(
  fc.record({ to: freeText, text: freeText }).map((args) => ({ name: 'message', arguments: args })),
  fc.constant({ name: 'read_messages', arguments: {} }),
  fc
    .record(
      {
        count: fc.integer(),
        weight: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Object.is(value, -0)),
        final: fc.boolean(),
        numbers: fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 5 }),
      },
      { requiredKeys: ['count'] },
    )
    .map((args) => ({ name: 'record', arguments: args as Record<string, JsonValue> })),
);

// The same call in the spellings models produce: canonical, compact, indented, arguments as a string.
const callTextArb = fc.tuple(callArb, fc.constantFrom('canonical', 'compact', 'indented', 'string-arguments')).map(([call, style]) => {
  if (style === 'canonical') return { call, text: renderToolCall(call) };
  if (style === 'compact') return { call, text: `<tool_call>${JSON.stringify(call)}</tool_call>` };
  if (style === 'indented') return { call, text: `<tool_call>\n${JSON.stringify(call, null, 2)}\n</tool_call>\n` };
  return { call, text: `<tool_call>\n${jsonDumps({ name: call.name, arguments: jsonDumps(call.arguments) })}\n</tool_call>` };
});

const responseArb = fc.record({ thinking: fc.option(freeText), prose: freeText, callText: callTextArb }).map(({ thinking, prose, callText }) => ({
  call: callText.call,
  text: `${thinking === null ? '' : `<think>\n${thinking}\n</think>\n\n`}${prose}${callText.text}`,
}));

const mutationArb = fc.array(
  fc.tuple(fc.constantFrom('insert', 'delete', 'replace'), fc.nat(), fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }))),
  { minLength: 1, maxLength: 5 },
);

function mutate(text: string, mutations: ReadonlyArray<readonly [string, number, string]>): string {
  let result = text;
  for (const [operation, rawPosition, insert] of mutations) {
    const position = rawPosition % (result.length + 1);
    if (operation === 'insert') result = result.slice(0, position) + insert + result.slice(position);
    if (operation === 'delete') result = result.slice(0, position) + result.slice(position + 1);
    if (operation === 'replace') result = result.slice(0, position) + insert + result.slice(position + insert.length);
  }
  return result;
}

function expectError(error: ToolCallError): void {
  expect(ERROR_KINDS).toContain(error.kind);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  const output = toolErrorOutput(error);
  expect(JSON.parse(output)).toEqual({ error: error.message });
  expect(output).not.toMatch(/<\|[a-z_]+\|>|<\/?(?:tool_call|tool_response|think)>/);
}

// Checks the shape and internal consistency of a parse, and runs validation on every call.
function expectWellFormed(parsed: ParsedResponse, text: string, finish: PieceFinish): void {
  expect(Object.keys(parsed).sort()).toEqual(['calls', 'cutCall', 'finalAnswer', 'idle', 'responseEnded']);
  for (const outcome of parsed.calls) {
    expect(Number.isInteger(outcome.start) && Number.isInteger(outcome.end)).toBe(true);
    expect(0 <= outcome.start && outcome.start < outcome.end && outcome.end <= text.length).toBe(true);
    expect(text.slice(outcome.start, outcome.end)).toMatch(/<\/tool_call>$/);
    if (outcome.ok) {
      expect(outcome.call.name.trim()).not.toBe('');
      expect(typeof outcome.call.arguments === 'object' && !Array.isArray(outcome.call.arguments)).toBe(true);
      const validation = validateToolCall({ call: outcome.call, tools });
      if (!validation.ok) expectError(validation.error);
    } else {
      expectError(outcome.error);
    }
  }
  if (parsed.cutCall !== null) {
    expect(parsed.cutCall.text.startsWith('<tool_call>')).toBe(true);
    expect(text.startsWith(parsed.cutCall.text, parsed.cutCall.start)).toBe(true);
    expect(parsed.cutCall.error.kind).toBe('cut_off');
    expectError(parsed.cutCall.error);
  }
  if (parsed.finalAnswer !== null) {
    expect(text.startsWith('####', parsed.finalAnswer.start)).toBe(true);
    expect(parsed.finalAnswer.answer).toBe(parsed.finalAnswer.answer.trim());
  }
  expect(parsed.responseEnded).toBe(finish === 'end');
  expect(parsed.idle).toBe(parsed.responseEnded && parsed.calls.length === 0 && parsed.finalAnswer === null);
}

function parseChecked(text: string, finish: PieceFinish): ParsedResponse {
  const parsed = parseAssistantResponse({ text, finish });
  expectWellFormed(parsed, text, finish);
  return parsed;
}

describe('parseAssistantResponse properties', () => {
  it('never throws on random strings and always returns a well-formed result', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fragmentText), finishArb, (text, finish) => {
      parseChecked(text, finish);
    }), { numRuns: 3000 });
  });

  it('always answers a stop at </tool_call>: some outcome ends at the end of the text', () => {
    fc.assert(fc.property(fc.oneof(freeText, fragmentText).filter((text) => !text.includes('<|im_end|>') && !text.includes('<|endoftext|>')), (prefix) => {
      const text = `${prefix}</tool_call>`;
      const parsed = parseChecked(text, 'tool_call');
      expect(parsed.calls.at(-1)?.end).toBe(text.length);
    }), { numRuns: 2000 });
  });

  it('recovers an unmutated valid call exactly, and validation accepts it', () => {
    fc.assert(fc.property(responseArb, ({ call, text }) => {
      const parsed = parseChecked(text, 'tool_call');
      expect(parsed.calls).toHaveLength(1);
      const [outcome] = parsed.calls;
      expect(outcome.ok && outcome.call).toEqual(call);
      expect(parsed.cutCall).toBeNull();
      expect(validateToolCall({ call, tools })).toEqual({ ok: true, call });
    }), { numRuns: 1500 });
  });

  it('never throws on mutated valid calls', () => {
    fc.assert(fc.property(responseArb, mutationArb, finishArb, ({ text }, mutations, finish) => {
      parseChecked(mutate(text, mutations), finish);
    }), { numRuns: 2000 });
  });

  it('never executes a call cut at any position, and reports it cut once <tool_call> is complete', () => {
    fc.assert(fc.property(responseArb, ({ call, text }) => {
      const open = text.indexOf('<tool_call>');
      const openEnd = open + '<tool_call>'.length;
      const closeEnd = text.indexOf('</tool_call>') + '</tool_call>'.length;
      for (let length = 0; length <= text.length; length += 1) {
        const parsed = parseChecked(text.slice(0, length), 'length');
        if (length < closeEnd) {
          expect(parsed.calls).toEqual([]);
          expect(parsed.cutCall === null).toBe(length < openEnd);
        } else {
          expect(parsed.calls).toHaveLength(1);
          expect(parsed.calls[0].ok && parsed.calls[0].call).toEqual(call);
        }
      }
    }), { numRuns: 150 });
  });
});
