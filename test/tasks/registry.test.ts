// Tests of the task registry and of the prompt texts shared with the harness (Table 2, Appendix G).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { getTask, TASK_NAMES } from '../../src/tasks/index.js';
import { LOOK_TOOL, MOVE_TOOL } from '../../src/tasks/exploration/tools.js';
import {
  harnessRules,
  IDLENESS_RULES,
  IDLENESS_RULES_NO_COMMUNICATION,
  NOTIFICATION_RULES,
} from '../../src/tasks/prompts/harness-rules.js';
import { CHECK_NOTIFICATIONS_TOOL, MESSAGE_TOOL, MESSAGE_TOOL_NAMES, READ_MESSAGES_TOOL } from '../../src/tasks/prompts/message-tools.js';

describe('getTask', () => {
  it('returns each registered task under its name', () => {
    expect(TASK_NAMES).toEqual(['aggregation', 'aggregation-digits', 'exploration', 'exploration-d2']);
    for (const name of TASK_NAMES) expect(getTask(name).name).toBe(name);
  });

  it('refuses an unknown name, listing the known ones', () => {
    expect(() => getTask('sorting')).toThrow(ConfigError);
    expect(() => getTask('toString')).toThrow(/expected one of: aggregation, aggregation-digits, exploration, exploration-d2/);
  });
});

describe('tool descriptions (Table 2, verbatim)', () => {
  it('describes the messaging tools', () => {
    expect(MESSAGE_TOOL.description).toBe(
      'Send plans, questions, tentative ideas, dead ends, or checked results to one available teammate or all available ' +
        'teammates. Label uncertainty and verification status. Delivery is immediate. Sending does not read incoming ' +
        'messages or wait for replies; use read_messages when notified.',
    );
    expect(MESSAGE_TOOL.parameters.required).toEqual(['to', 'text']);
    expect(READ_MESSAGES_TOOL.description).toBe('Read explicitly received unread peer messages.');
    expect(CHECK_NOTIFICATIONS_TOOL.description).toBe('Check unread message counts by sender without reading messages.');
    expect(MESSAGE_TOOL_NAMES).toEqual(['message', 'read_messages', 'check_notifications']);
  });

  it('describes the exploration tools', () => {
    expect(MOVE_TOOL.description).toBe(
      'Walk through a door of your current room into the named adjacent room. Returns what you see there. Your ' +
        'position is private: moving never moves a teammate.',
    );
    expect(LOOK_TOOL.description).toBe('Describe your current room again without moving.');
  });
});

describe('harness rules (Appendix G)', () => {
  it('gives communicating agents the notification rules and the idleness rules', () => {
    expect(NOTIFICATION_RULES.startsWith('While you are working, we will immediately notify you whenever another agent sends you a message')).toBe(true);
    expect(NOTIFICATION_RULES.endsWith('You can continue reasoning or doing useful work while waiting for a notification.')).toBe(true);
    expect(IDLENESS_RULES.startsWith('A complete tool call runs immediately and you receive its result.')).toBe(true);
    expect(IDLENESS_RULES).toContain(
      'If you end a response without a tool call or final answer, you become idle: no tokens are spent while waiting, ' +
        'and a new peer message wakes you. If everyone is idle or finished, you will be asked for your final answer ' +
        'once. Do not repeat statements merely to keep yourself active.',
    );
    expect(harnessRules({ communication: true })).toBe(`${NOTIFICATION_RULES}\n\n${IDLENESS_RULES}`);
  });

  it('drops the notification rules and every mention of messages without communication', () => {
    const rules = harnessRules({ communication: false });
    expect(rules).toBe(IDLENESS_RULES_NO_COMMUNICATION);
    expect(rules).not.toMatch(/message|notif|inbox/i);
  });
});
