// The notification an agent reads when its unread counts change (SPEC §3, Appendix F): the output of
// check_notifications, pushed by the harness. It never holds message contents. The single-sender
// notice is the paper's; the wording for several senders and for an empty inbox is ours.

import { jsonDumps } from '../common/json-dumps.js';

const READ_HINT = 'Use read_messages to read them; this notification does not mark messages as read.';

function plural(count: number): string {
  return count === 1 ? `${count} unread message` : `${count} unread messages`;
}

/** The notice sentence for unread counts by sender. */
export function notificationNotice(unreadBySender: Readonly<Record<string, number>>): string {
  const senders = Object.entries(unreadBySender);
  if (senders.length === 0) return 'You have no unread messages.';
  if (senders.length === 1) return `You have ${plural(senders[0][1])} from ${senders[0][0]}.\n${READ_HINT}`;
  const total = senders.reduce((sum, [, count]) => sum + count, 0);
  const parts = senders.map(([sender, count]) => `${count} from ${sender}`).join(', ');
  return `You have ${plural(total)}: ${parts}.\n${READ_HINT}`;
}

/** The notification JSON: {"unread_by_sender": {...}, "notice": "..."}. */
export function notificationOutput(unreadBySender: Readonly<Record<string, number>>): string {
  return jsonDumps({ unread_by_sender: { ...unreadBySender }, notice: notificationNotice(unreadBySender) });
}
