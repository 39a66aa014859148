// Unit cases of validateToolCall: a valid call, and every validation error kind with the
// message the agent reads.

import { describe, expect, it } from 'vitest';
import { validateToolCall } from '../../src/common/index.js';
import type { JsonValue, ToolSpec } from '../../src/common/index.js';

const tools: ToolSpec[] = [
  {
    name: 'message',
    description: 'Send a message.',
    parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'], additionalProperties: false },
  },
  { name: 'read_messages', description: 'Read.', parameters: { type: 'object', properties: {} } },
  {
    name: 'record',
    description: 'Typed arguments.',
    parameters: {
      type: 'object',
      properties: {
        count: { type: 'integer' },
        weight: { type: 'number' },
        final: { type: 'boolean' },
        numbers: { type: 'array', items: { type: 'integer' } },
        anything: { type: 'array' },
      },
      required: ['count'],
    },
  },
];

function validate(name: string, args: Record<string, JsonValue>) {
  return validateToolCall({ call: { name, arguments: args }, tools });
}

function errorMessage(name: string, args: Record<string, JsonValue>): string {
  const result = validate(name, args);
  if (result.ok) throw new Error('expected a validation error');
  return `${result.error.kind}: ${result.error.message}`;
}

describe('validateToolCall', () => {
  it('accepts a call that matches its schema', () => {
    expect(validate('message', { to: 'agent_3', text: 'hi' })).toEqual({ ok: true, call: { name: 'message', arguments: { to: 'agent_3', text: 'hi' } } });
    expect(validate('record', { count: 2, weight: 0.5, final: false, numbers: [1, 2], anything: ['x', 1, null] }).ok).toBe(true);
  });

  it('names the available tools for an unknown tool', () => {
    expect(errorMessage('agent_3', {})).toBe('unknown_tool: unknown tool "agent_3"; available tools: message, read_messages, record');
    expect(errorMessage('constructor', {})).toMatch(/^unknown_tool/);
  });

  it('reports a missing required argument', () => {
    expect(errorMessage('message', { to: 'all' })).toBe('missing_argument: tool "message" is missing required argument "text"; its arguments are: to, text');
  });

  it('reports an undeclared argument, with or without additionalProperties in the spec', () => {
    expect(errorMessage('message', { to: 'all', text: 'x', cc: 'agent_2' })).toBe('unexpected_argument: tool "message" has no argument "cc"; its arguments are: to, text');
    expect(errorMessage('read_messages', { limit: 3 })).toBe('unexpected_argument: tool "read_messages" has no argument "limit"; it takes no arguments');
    expect(errorMessage('read_messages', JSON.parse('{"__proto__": 1}') as Record<string, JsonValue>)).toMatch(/^unexpected_argument: .*"__proto__"/);
  });

  it('rejects a name that is not a string and arguments that are not an object', () => {
    const tool = (name: unknown, args: unknown) => validateToolCall({ call: { name, arguments: args }, tools });
    const error = (result: ReturnType<typeof tool>) => (result.ok ? 'ok' : `${result.error.kind}: ${result.error.message}`);
    expect(error(tool(7, {}))).toBe('unknown_tool: unknown tool (the integer 7, not a name); available tools: message, read_messages, record');
    expect(error(tool('read_messages', 'now'))).toBe('invalid_arguments: tool call "arguments" must be a JSON object, got a string');
    expect(error(tool('read_messages', [1]))).toBe('invalid_arguments: tool call "arguments" must be a JSON object, got an array');
    expect(error(tool('read_messages', undefined))).toBe('ok');
  });

  it('says so when no tools are available', () => {
    const result = validateToolCall({ call: { name: 'move', arguments: {} }, tools: [] });
    expect(result.ok ? 'ok' : result.error.message).toBe('unknown tool "move"; available tools: (none)');
  });

  it('reports a value of the wrong type', () => {
    expect(errorMessage('message', { to: 3, text: 'x' })).toBe('wrong_type: argument "to" of tool "message" must be a string, got the integer 3');
    expect(errorMessage('record', { count: 2.5 })).toBe('wrong_type: argument "count" of tool "record" must be an integer, got the number 2.5');
    expect(errorMessage('record', { count: 1, weight: '1' })).toBe('wrong_type: argument "weight" of tool "record" must be a number, got a string');
    expect(errorMessage('record', { count: 1, final: 'yes' })).toBe('wrong_type: argument "final" of tool "record" must be a boolean, got a string');
    expect(errorMessage('record', { count: 1, numbers: 'x' })).toBe('wrong_type: argument "numbers" of tool "record" must be an array, got a string');
    expect(errorMessage('record', { count: 1, numbers: [1, '2'] })).toBe('wrong_type: argument "numbers" of tool "record" must be an array of integers, but item 1 is a string');
    expect(errorMessage('message', { to: null, text: 'x' })).toMatch(/^wrong_type: .*got null/);
  });
});
