// The message board and the notification text: delivery, reading order and limits, unread counts.

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { MessageBoard, notificationNotice, notificationOutput, READ_BATCH_SIZE } from '../../src/harness/index.js';

const NAMES = ['agent_1', 'agent_2', 'agent_3', 'agent_4'];

function post(board: MessageBoard, from: string, recipients: string[], text: string) {
  return board.post({ from, to: recipients.length > 1 ? 'all' : recipients[0], recipients, text, callId: 0 });
}

describe('MessageBoard', () => {
  it('puts a broadcast into every recipient queue and none into the sender', () => {
    const board = new MessageBoard(NAMES);
    post(board, 'agent_1', ['agent_2', 'agent_3', 'agent_4'], 'hi');
    expect(NAMES.map((name) => board.unreadCount(name))).toEqual([0, 1, 1, 1]);
  });

  it('numbers messages in order of sending', () => {
    const board = new MessageBoard(NAMES);
    expect(post(board, 'agent_1', ['agent_2'], 'a').id).toBe(0);
    expect(post(board, 'agent_3', ['agent_2'], 'b').id).toBe(1);
    expect(board.messages.map((message) => message.text)).toEqual(['a', 'b']);
  });

  it('reads at most 16 messages, oldest first, and marks them read', () => {
    const board = new MessageBoard(NAMES);
    for (let i = 0; i < 20; i += 1) post(board, i % 2 === 0 ? 'agent_1' : 'agent_3', ['agent_2'], `m${i}`);
    const first = board.read('agent_2');
    expect(READ_BATCH_SIZE).toBe(16);
    expect(first.map((message) => message.text)).toEqual(Array.from({ length: 16 }, (_, i) => `m${i}`));
    expect(board.unreadCount('agent_2')).toBe(4);
    expect(board.read('agent_2').map((message) => message.text)).toEqual(['m16', 'm17', 'm18', 'm19']);
    expect(board.read('agent_2')).toEqual([]);
  });

  it('counts unread messages by sender in order of each sender’s oldest unread message', () => {
    const board = new MessageBoard(NAMES);
    post(board, 'agent_4', ['agent_2'], 'a');
    post(board, 'agent_1', ['agent_2'], 'b');
    post(board, 'agent_4', ['agent_2'], 'c');
    expect(Object.entries(board.unreadBySender('agent_2'))).toEqual([
      ['agent_4', 2],
      ['agent_1', 1],
    ]);
    board.read('agent_2', 1);
    expect(Object.entries(board.unreadBySender('agent_2'))).toEqual([
      ['agent_1', 1],
      ['agent_4', 1],
    ]);
  });

  it('rejects an agent that is not on the board', () => {
    expect(() => new MessageBoard(NAMES).read('agent_9')).toThrow(ConfigError);
  });
});

describe('notifications', () => {
  it('writes the paper’s notification for one message from one sender', () => {
    expect(notificationOutput({ agent_17: 1 })).toBe(
      '{"unread_by_sender": {"agent_17": 1}, "notice": "You have 1 unread message from agent_17.\\nUse read_messages to read them; this notification does not mark messages as read."}',
    );
  });

  it('counts several messages and several senders', () => {
    expect(notificationNotice({ agent_2: 3 })).toMatch(/^You have 3 unread messages from agent_2\.\n/);
    expect(notificationNotice({ agent_2: 2, agent_9: 1 })).toMatch(/^You have 3 unread messages: 2 from agent_2, 1 from agent_9\.\n/);
  });

  it('says so when nothing is unread', () => {
    expect(notificationOutput({})).toBe('{"unread_by_sender": {}, "notice": "You have no unread messages."}');
  });
});
