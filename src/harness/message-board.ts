// The message board of one team attempt (Appendix F, "Messaging service"): every message ever sent,
// and each agent's unread messages in arrival order. Attempts never share a board. The board only
// stores and hands out messages; checking recipients, notifying and waking agents is the harness's.

import { ConfigError } from '../errors.js';

/** How many unread messages one read_messages call returns at most (Table 2). */
export const READ_BATCH_SIZE = 16;

/** One message on the board. */
export interface PostedMessage {
  /** Board-wide id, 0, 1, 2, … in order of sending. */
  readonly id: number;
  /** The sender's name. */
  readonly from: string;
  /** What the sender wrote in `to`: a teammate's name or "all". */
  readonly to: string;
  /** Everyone it was delivered to (every teammate for a broadcast). */
  readonly recipients: readonly string[];
  /** The message text. */
  readonly text: string;
  /** The id of the message call that sent it. */
  readonly callId: number;
}

/** What post() needs. */
export interface PostOptions {
  /** The sender's name. */
  readonly from: string;
  /** The recipient as written ("all" or a name). */
  readonly to: string;
  /** The resolved recipients. */
  readonly recipients: readonly string[];
  /** The message text. */
  readonly text: string;
  /** The id of the sending call. */
  readonly callId: number;
}

interface Inbox {
  readonly queue: PostedMessage[];
  /** Index of the oldest unread message in queue. */
  head: number;
}

/** One team attempt's messages and every agent's unread queue. */
export class MessageBoard {
  /** Every message, in order of sending. */
  readonly messages: PostedMessage[] = [];
  private readonly inboxes = new Map<string, Inbox>();

  /** A board for the named agents. */
  constructor(agentNames: readonly string[]) {
    for (const name of agentNames) this.inboxes.set(name, { queue: [], head: 0 });
  }

  /** Records a message and puts it into every recipient's unread queue. */
  post(options: PostOptions): PostedMessage {
    const message = this.record(options);
    this.deliver(message);
    return message;
  }

  /** Records a message without delivering it yet (a delayed channel, message-channel.ts). */
  record(options: PostOptions): PostedMessage {
    const message: PostedMessage = { id: this.messages.length, ...options };
    this.messages.push(message);
    return message;
  }

  /** Puts a recorded message into every recipient's unread queue. */
  deliver(message: PostedMessage): void {
    for (const recipient of message.recipients) this.inbox(recipient).queue.push(message);
  }

  /** Returns up to `limit` of the reader's oldest unread messages and marks them read. */
  read(reader: string, limit: number = READ_BATCH_SIZE): PostedMessage[] {
    const inbox = this.inbox(reader);
    const batch = inbox.queue.slice(inbox.head, inbox.head + limit);
    inbox.head += batch.length;
    return batch;
  }

  /** The reader's unread count. */
  unreadCount(reader: string): number {
    const inbox = this.inbox(reader);
    return inbox.queue.length - inbox.head;
  }

  /** Unread counts by sender, senders in order of their oldest unread message. */
  unreadBySender(reader: string): Record<string, number> {
    const inbox = this.inbox(reader);
    const counts: Record<string, number> = {};
    for (let i = inbox.head; i < inbox.queue.length; i += 1) {
      const from = inbox.queue[i].from;
      counts[from] = (counts[from] ?? 0) + 1;
    }
    return counts;
  }

  private inbox(name: string): Inbox {
    const inbox = this.inboxes.get(name);
    if (inbox === undefined) throw new ConfigError(`MessageBoard: no agent named "${name}" on this board.`);
    return inbox;
  }
}
