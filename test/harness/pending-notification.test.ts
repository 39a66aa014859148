// PendingNotification, the one record of whether an agent's notification is due: due after a message
// arrives, settled by a tool output that showed the counts, due again when a read leaves messages
// unread, consumed once, and empty when nothing is unread.
import { describe, expect, it } from 'vitest';
import { PendingNotification } from '../../src/harness/pending-notification.js';

describe('PendingNotification', () => {
  it('is taken once after a message arrives, with the unread counts at that moment', () => {
    const pending = new PendingNotification();
    let unread: Record<string, number> = { agent_2: 1 };
    expect(pending.take(() => unread)).toBeNull();
    pending.messageArrived();
    unread = { agent_2: 2 };
    expect(pending.take(() => unread)).toEqual({ agent_2: 2 });
    expect(pending.take(() => unread)).toBeNull();
  });

  it('is settled by check_notifications and due again when a read leaves messages unread', () => {
    const pending = new PendingNotification();
    pending.messageArrived();
    pending.afterCall({ showedUnread: true });
    expect(pending.take(() => ({ agent_3: 1 }))).toBeNull();
    pending.afterCall({ unreadLeft: true });
    expect(pending.take(() => ({ agent_3: 4 }))).toEqual({ agent_3: 4 });
    pending.afterCall({});
    expect(pending.take(() => ({ agent_3: 4 }))).toBeNull();
  });

  it('gives nothing when it is due but nothing is unread (a read emptied the inbox), and is consumed', () => {
    const pending = new PendingNotification();
    pending.messageArrived();
    expect(pending.take(() => ({}))).toBeNull();
    expect(pending.take(() => ({ agent_4: 1 }))).toBeNull();
  });
});
