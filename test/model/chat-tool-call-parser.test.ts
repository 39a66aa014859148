// Unit cases of parseAssistantResponse: valid calls and their whitespace variants, every parse
// error kind, reasoning blocks, cut calls, final answers and idleness.

import { describe, expect, it } from 'vitest';
import { parseAssistantResponse } from '../../src/model/chat/index.js';
import type { ParsedResponse, ToolCallErrorKind } from '../../src/model/chat/index.js';

const think = '<think>\nLet me share my number.\n</think>\n\n';

function onlyError(parsed: ParsedResponse): ToolCallErrorKind {
  expect(parsed.calls).toHaveLength(1);
  const [outcome] = parsed.calls;
  if (outcome.ok) throw new Error(`expected an error, got the call ${JSON.stringify(outcome.call)}`);
  return outcome.error.kind;
}

function errorOf(body: string): ToolCallErrorKind {
  return onlyError(parseAssistantResponse({ text: `${think}<tool_call>${body}</tool_call>`, finish: 'tool_call' }));
}

describe('parseAssistantResponse: complete calls', () => {
  it('recovers the canonical call after reasoning, with offsets', () => {
    const text = `${think}I will broadcast.\n<tool_call>\n{"name": "message", "arguments": {"to": "all", "text": "42"}}\n</tool_call>`;
    const parsed = parseAssistantResponse({ text, finish: 'tool_call' });
    expect(parsed.calls).toEqual([
      { ok: true, call: { name: 'message', arguments: { to: 'all', text: '42' } }, start: text.indexOf('<tool_call>'), end: text.length },
    ]);
    expect(parsed).toMatchObject({ cutCall: null, finalAnswer: null, responseEnded: false, idle: false });
  });

  it('tolerates missing or extra whitespace around the JSON', () => {
    for (const body of ['{"name":"look","arguments":{}}', ' \n\n {"name": "look", "arguments": {}}\t\n ', '\r\n{"name": "look",\n "arguments": {\n}}\r\n']) {
      const parsed = parseAssistantResponse({ text: `<tool_call>${body}</tool_call>`, finish: 'tool_call' });
      expect(parsed.calls).toMatchObject([{ ok: true, call: { name: 'look', arguments: {} } }]);
    }
  });

  it('accepts arguments given as a JSON string holding an object', () => {
    const text = '<tool_call>\n{"name": "move", "arguments": "{\\"room\\": \\"R4821\\"}"}\n</tool_call>';
    expect(parseAssistantResponse({ text, finish: 'tool_call' }).calls).toMatchObject([{ ok: true, call: { name: 'move', arguments: { room: 'R4821' } } }]);
  });

  it('treats missing arguments as none', () => {
    const parsed = parseAssistantResponse({ text: '<tool_call>{"name": "read_messages"}</tool_call>', finish: 'tool_call' });
    expect(parsed.calls).toMatchObject([{ ok: true, call: { name: 'read_messages', arguments: {} } }]);
  });

  it('reports several calls in text order', () => {
    const text = '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {}}</tool_call>';
    const names = parseAssistantResponse({ text, finish: 'tool_call' }).calls.map((outcome) => (outcome.ok ? outcome.call.name : outcome.error.kind));
    expect(names).toEqual(['a', 'b']);
  });

  it('keeps marker-like text inside JSON strings that are not </tool_call>', () => {
    const text = '<tool_call>{"name": "message", "arguments": {"to": "all", "text": "use <think> and #### carefully"}}</tool_call>';
    const parsed = parseAssistantResponse({ text, finish: 'tool_call' });
    expect(parsed.calls).toMatchObject([{ ok: true, call: { arguments: { text: 'use <think> and #### carefully' } } }]);
    expect(parsed.finalAnswer).toBeNull();
  });
});

describe('parseAssistantResponse: error kinds', () => {
  it('empty_call', () => expect(errorOf('\n  \n')).toBe('empty_call'));
  it('invalid_json, quoting the JSON error', () => {
    const parsed = parseAssistantResponse({ text: '<tool_call>{"name": }</tool_call>', finish: 'tool_call' });
    expect(onlyError(parsed)).toBe('invalid_json');
    const [outcome] = parsed.calls;
    expect(!outcome.ok && outcome.error.message).toMatch(/^invalid JSON in tool call: .*(Unexpected token|JSON)/);
  });
  it('not_an_object for arrays, strings and null', () => {
    expect(errorOf('[1, 2]')).toBe('not_an_object');
    expect(errorOf('"message"')).toBe('not_an_object');
    expect(errorOf('null')).toBe('not_an_object');
  });
  it('missing_name', () => expect(errorOf('{"arguments": {}}')).toBe('missing_name'));
  it('invalid_name for non-strings and blank names', () => {
    expect(errorOf('{"name": 7, "arguments": {}}')).toBe('invalid_name');
    expect(errorOf('{"name": "  ", "arguments": {}}')).toBe('invalid_name');
  });
  it('invalid_arguments for non-objects and strings that are not JSON objects', () => {
    expect(errorOf('{"name": "move", "arguments": ["R1"]}')).toBe('invalid_arguments');
    expect(errorOf('{"name": "move", "arguments": null}')).toBe('invalid_arguments');
    expect(errorOf('{"name": "move", "arguments": "R1"}')).toBe('invalid_arguments');
    expect(errorOf('{"name": "move", "arguments": "[1]"}')).toBe('invalid_arguments');
  });
  it('unexpected_field, naming the field', () => {
    const parsed = parseAssistantResponse({ text: '<tool_call>{"name": "move", "parameters": {"room": "R1"}}</tool_call>', finish: 'tool_call' });
    expect(onlyError(parsed)).toBe('unexpected_field');
    expect(parsed.calls[0].ok === false && parsed.calls[0].error.message).toContain('"parameters"');
  });
  it('nested_call when a second <tool_call> opens before the close', () => {
    expect(errorOf('{"name": "a", <tool_call>{"name": "b", "arguments": {}}')).toBe('nested_call');
  });
  it('unmatched_close for a </tool_call> with no opening tag', () => {
    const parsed = parseAssistantResponse({ text: `${think}{"name": "look", "arguments": {}}\n</tool_call>`, finish: 'tool_call' });
    expect(onlyError(parsed)).toBe('unmatched_close');
  });
  it('call_in_thinking when generation stopped at a </tool_call> inside <think>', () => {
    const text = '<think>\nmaybe <tool_call>\n{"name": "look", "arguments": {}}\n</tool_call>';
    const parsed = parseAssistantResponse({ text, finish: 'tool_call' });
    expect(onlyError(parsed)).toBe('call_in_thinking');
    expect(parsed.calls[0]).toMatchObject({ start: text.indexOf('<tool_call>'), end: text.length });
  });
  it('cut_off for a call the piece limit stopped in; it is not a complete call', () => {
    const text = `${think}<tool_call>\n{"name": "message", "arguments": {"to": "al`;
    const parsed = parseAssistantResponse({ text, finish: 'length' });
    expect(parsed.calls).toEqual([]);
    expect(parsed.cutCall).toEqual({
      text: '<tool_call>\n{"name": "message", "arguments": {"to": "al',
      start: think.length,
      error: { kind: 'cut_off', message: expect.stringContaining('not executed') },
    });
  });
  it('messages are readable sentences for the agent', () => {
    const parsed = parseAssistantResponse({ text: '<tool_call>{"name": 3}</tool_call>', finish: 'tool_call' });
    expect(parsed.calls[0].ok === false && parsed.calls[0].error.message).toBe('tool call "name" must be a non-empty string, got a number');
  });
});

describe('parseAssistantResponse: reasoning', () => {
  it('ignores complete calls inside <think> when generation did not stop on them', () => {
    const text = '<think>\nI could write <tool_call>{"name": "look", "arguments": {}}</tool_call> but not yet.\n</think>\n\nWaiting.<|im_end|>';
    const parsed = parseAssistantResponse({ text, finish: 'end' });
    expect(parsed.calls).toEqual([]);
    expect(parsed.idle).toBe(true);
  });

  it('ignores an open call inside an unclosed <think> when the piece is cut', () => {
    const parsed = parseAssistantResponse({ text: '<think>\nplan: <tool_call>{"name"', finish: 'length' });
    expect(parsed).toMatchObject({ calls: [], cutCall: null, finalAnswer: null, idle: false });
  });

  it('treats a stray </think> outside reasoning as text', () => {
    const parsed = parseAssistantResponse({ text: 'ok </think>\n<tool_call>{"name": "look"}</tool_call>', finish: 'tool_call' });
    expect(parsed.calls).toMatchObject([{ ok: true, call: { name: 'look' } }]);
  });

  it('continues across pieces: a call cut in one piece completes in the next', () => {
    const first = `${think}<tool_call>\n{"name": "look", "argu`;
    expect(parseAssistantResponse({ text: first, finish: 'length' }).cutCall).not.toBeNull();
    const whole = parseAssistantResponse({ text: `${first}ments": {}}\n</tool_call>`, finish: 'tool_call' });
    expect(whole).toMatchObject({ calls: [{ ok: true, call: { name: 'look', arguments: {} } }], cutCall: null });
  });
});

describe('parseAssistantResponse: final answers and idleness', () => {
  it('finds a complete #### line outside reasoning', () => {
    const text = '<think>\n#### [1, 2] is a guess\n</think>\n\nAll numbers collected.\n#### [5, 17, 42, 73]<|im_end|>';
    const parsed = parseAssistantResponse({ text, finish: 'end' });
    expect(parsed.finalAnswer).toEqual({ answer: '[5, 17, 42, 73]', start: text.indexOf('#### [5') });
    expect(parsed).toMatchObject({ responseEnded: true, idle: false });
  });

  it('does not report a #### line the piece limit cut', () => {
    expect(parseAssistantResponse({ text: `${think}#### [5, 17, 4`, finish: 'length' }).finalAnswer).toBeNull();
  });

  it('reports a #### line followed by a newline even if the piece was cut later', () => {
    expect(parseAssistantResponse({ text: `${think}  #### [5, 17]\nand then I`, finish: 'length' }).finalAnswer).toMatchObject({ answer: '[5, 17]' });
  });

  it('accepts the last line when the stop token text is absent but the response ended', () => {
    expect(parseAssistantResponse({ text: '#### [3]', finish: 'end' }).finalAnswer).toMatchObject({ answer: '[3]' });
  });

  it('takes the first complete answer and ignores ones after <|im_end|>', () => {
    const parsed = parseAssistantResponse({ text: '#### [1]\n#### [2]<|im_end|>\n#### [3]\n', finish: 'end' });
    expect(parsed.finalAnswer).toMatchObject({ answer: '[1]' });
  });

  it('ignores #### that does not start a line', () => {
    expect(parseAssistantResponse({ text: 'The format is #### [..]\n', finish: 'end' }).finalAnswer).toBeNull();
  });

  it('goes idle when a response ends with neither a call nor an answer, even with a cut call', () => {
    expect(parseAssistantResponse({ text: `${think}I will wait.<|im_end|>`, finish: 'end' }).idle).toBe(true);
    const cut = parseAssistantResponse({ text: '<tool_call>{"name": "look"<|im_end|>', finish: 'end' });
    expect(cut).toMatchObject({ idle: true, calls: [], cutCall: { text: '<tool_call>{"name": "look"' } });
  });

  it('is not idle when the response ended after a call written without the stop token', () => {
    const parsed = parseAssistantResponse({ text: '<tool_call>{"name": "look"}</tool_call><|im_end|>', finish: 'end' });
    expect(parsed).toMatchObject({ idle: false, responseEnded: true });
    expect(parsed.calls).toHaveLength(1);
  });
});
