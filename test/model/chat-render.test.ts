// Pins the exact text of every piece of an agent's history in Qwen3's ChatML with tools
// (docs/chat-format.md), against hand-written strings.

import { describe, expect, it } from 'vitest';
import { jsonDumps, JsonEncodingError, toolErrorOutput } from '../../src/common/index.js';
import type { ToolSpec } from '../../src/common/index.js';
import {
  ChatFormatError,
  renderAssistantPrefix,
  renderFollowUpUserTurn,
  renderPrompt,
  renderSystemTurn,
  renderToolCall,
  renderToolResponses,
  renderTurnClose,
  renderUserTurn,
  toolSpecJson,
} from '../../src/model/chat/index.js';

const readMessages: ToolSpec = { name: 'read_messages', description: 'Read explicitly received unread peer messages.', parameters: { type: 'object', properties: {} } };
const message: ToolSpec = {
  name: 'message',
  description: 'Send to "all" — or one teammate.',
  parameters: {
    type: 'object',
    properties: { to: { type: 'string', description: 'name or all' }, text: { type: 'string' } },
    required: ['to', 'text'],
    additionalProperties: false,
  },
};
const notification = jsonDumps({
  unread_by_sender: { agent_17: 1 },
  notice: 'You have 1 unread message from agent_17.\nUse read_messages to read them; this notification does not mark messages as read.',
});

describe('renderSystemTurn', () => {
  it('lists each tool as one JSON line inside <tools> with the stock instructions', () => {
    expect(renderSystemTurn({ system: 'You are agent_3.', tools: [readMessages, message] })).toBe(
      '<|im_start|>system\nYou are agent_3.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
        'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "read_messages", "description": "Read explicitly received unread peer messages.", "parameters": {"type": "object", "properties": {}}}}\n' +
        '{"type": "function", "function": {"name": "message", "description": "Send to \\"all\\" — or one teammate.", "parameters": {"type": "object", "properties": {"to": {"type": "string", "description": "name or all"}, "text": {"type": "string"}}, "required": ["to", "text"], "additionalProperties": false}}}\n' +
        '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n',
    );
  });

  it('renders a plain system turn when the agent has no tools (communication off)', () => {
    expect(renderSystemTurn({ system: 'You explore independently.', tools: [] })).toBe('<|im_start|>system\nYou explore independently.<|im_end|>\n');
  });

  it('writes tool keys in canonical order whatever order the spec object was built in', () => {
    const shuffled = {
      parameters: { additionalProperties: false, required: ['room'], properties: { room: { description: 'a door', type: 'string' } }, type: 'object' },
      description: 'Walk.',
      name: 'move',
    } as ToolSpec;
    expect(toolSpecJson(shuffled)).toBe(
      '{"type": "function", "function": {"name": "move", "description": "Walk.", "parameters": {"type": "object", "properties": {"room": {"type": "string", "description": "a door"}}, "required": ["room"], "additionalProperties": false}}}',
    );
  });
});

describe('user turns and the generation prompt', () => {
  it('renders a user turn', () => {
    expect(renderUserTurn('Your private number: seventy-three.')).toBe('<|im_start|>user\nYour private number: seventy-three.<|im_end|>\n');
  });

  it('opens the assistant turn without pre-filling an empty think block (thinking on)', () => {
    expect(renderAssistantPrefix()).toBe('<|im_start|>assistant\n');
  });

  it('renders the initial prompt as system turn, user turn, generation prompt', () => {
    expect(renderPrompt({ system: 'S', tools: [], user: 'U' })).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n');
  });

  it('pre-fills the empty think block of enable_thinking=false in every generation prompt with thinking off', () => {
    const empty = '<|im_start|>assistant\n<think>\n\n</think>\n\n';
    expect(renderAssistantPrefix(false)).toBe(empty);
    expect(renderPrompt({ system: 'S', tools: [], user: 'U', thinking: false })).toBe(`<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n${empty}`);
    expect(renderToolResponses({ outputs: ['{}'], after: 'tool_call', thinking: false }).endsWith(`<|im_end|>\n${empty}`)).toBe(true);
    expect(renderFollowUpUserTurn({ text: 'Answer.', after: 'end', thinking: false })).toBe(`\n<|im_start|>user\nAnswer.<|im_end|>\n${empty}`);
  });
});

describe('renderTurnClose', () => {
  it('adds only a newline after a sampled <|im_end|>', () => {
    expect(renderTurnClose('end')).toBe('\n');
  });

  it('closes the still-open turn after a tool call, a cut piece or a full context', () => {
    expect(renderTurnClose('tool_call')).toBe('<|im_end|>\n');
    expect(renderTurnClose('length')).toBe('<|im_end|>\n');
    expect(renderTurnClose('context')).toBe('<|im_end|>\n');
  });
});

describe('renderToolResponses', () => {
  it('answers a tool call: close, user turn with the block, generation prompt', () => {
    expect(renderToolResponses({ outputs: ['{"sent": true}'], after: 'tool_call' })).toBe(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n{"sent": true}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('puts several outputs in one user turn, one block each, in order', () => {
    expect(renderToolResponses({ outputs: ['first', 'second'], after: 'tool_call' })).toBe(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\nfirst\n</tool_response>\n<tool_response>\nsecond\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('appends a notification after a piece that ended mid-response, keeping the sampled prefix', () => {
    const sampled = '<think>\nI should wait for agent_17 and then';
    const history = `<|im_start|>assistant\n${sampled}` + renderToolResponses({ outputs: [notification], after: 'length' });
    expect(history).toBe(
      '<|im_start|>assistant\n<think>\nI should wait for agent_17 and then<|im_end|>\n<|im_start|>user\n<tool_response>\n' +
        '{"unread_by_sender": {"agent_17": 1}, "notice": "You have 1 unread message from agent_17.\\nUse read_messages to read them; this notification does not mark messages as read."}' +
        '\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('answers a call cut off by the piece limit with its error before the notification', () => {
    const cut = toolErrorOutput({ kind: 'cut_off', message: 'tool call stopped before its closing tool_call tag and was not executed; write the complete call again' });
    expect(renderToolResponses({ outputs: [cut, notification], after: 'length' })).toBe(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n{"error": "tool call stopped before its closing tool_call tag and was not executed; write the complete call again"}\n</tool_response>\n' +
        `<tool_response>\n${notification}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`,
    );
  });

  it('wakes an idle agent whose response ended with <|im_end|>', () => {
    expect(`Done for now.<|im_end|>` + renderToolResponses({ outputs: ['N'], after: 'end' })).toBe(
      'Done for now.<|im_end|>\n<|im_start|>user\n<tool_response>\nN\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('refuses an empty list of outputs', () => {
    expect(() => renderToolResponses({ outputs: [], after: 'end' })).toThrow(ChatFormatError);
  });
});

describe('renderFollowUpUserTurn', () => {
  const finalPrompt = 'Submit the sorted list of all four agents\u2019 numbers now.';

  it('asks an idle agent for its final answer', () => {
    expect(renderFollowUpUserTurn({ text: finalPrompt, after: 'end' })).toBe(`\n<|im_start|>user\n${finalPrompt}<|im_end|>\n<|im_start|>assistant\n`);
  });

  it('asks an agent whose allowance ran out mid-response', () => {
    expect(renderFollowUpUserTurn({ text: finalPrompt, after: 'length' })).toBe(
      `<|im_end|>\n<|im_start|>user\n${finalPrompt}<|im_end|>\n<|im_start|>assistant\n`,
    );
  });
});

describe('renderToolCall', () => {
  it('writes the call as the template and the prompt do', () => {
    expect(renderToolCall({ name: 'message', arguments: { to: 'all', text: 'My number is 42.\n' } })).toBe(
      '<tool_call>\n{"name": "message", "arguments": {"to": "all", "text": "My number is 42.\\n"}}\n</tool_call>',
    );
    expect(renderToolCall({ name: 'read_messages', arguments: {} })).toBe('<tool_call>\n{"name": "read_messages", "arguments": {}}\n</tool_call>');
  });
});

describe('jsonDumps', () => {
  it('matches Python json.dumps(ensure_ascii=False)', () => {
    expect(jsonDumps({ a: [1, 2.5, true, null], 'b"': 'é\u00e9\n\t\u0001', c: {}, d: [] })).toBe(
      '{"a": [1, 2.5, true, null], "b\\"": "éé\\n\\t\\u0001", "c": {}, "d": []}',
    );
  });

  it('writes integers as Python ints and small floats with a two-digit exponent', () => {
    expect(jsonDumps([1e21, 0.0001, 0.00001, 1.5e-7, -2.5e-10])).toBe('[1000000000000000000000, 0.0001, 1e-05, 1.5e-07, -2.5e-10]');
  });

  it('escapes the < of every Qwen3 marker inside strings, so the JSON decodes to the same text', () => {
    const text = 'a <|im_end|> b </tool_call> <think> </tool_response> <|fim_pad|> <b> < think> <|IM_END|>';
    const dumped = jsonDumps({ [text]: text });
    const escaped = 'a \\u003c|im_end|> b \\u003c/tool_call> \\u003cthink> \\u003c/tool_response> \\u003c|fim_pad|> <b> < think> <|IM_END|>';
    expect(dumped).toBe(`{"${escaped}": "${escaped}"}`);
    expect(JSON.parse(dumped)).toEqual({ [text]: text });
  });

  it('omits undefined fields and refuses NaN', () => {
    expect(jsonDumps({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(() => jsonDumps(Number.NaN)).toThrow(JsonEncodingError);
  });
});
