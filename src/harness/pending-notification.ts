// Whether an agent's notification is due, in one place (SPEC §3, Appendix F): a message arriving makes
// it due; a tool output that already showed the unread counts (check_notifications) settles it; a
// read that leaves messages unread makes it due again. When the harness appends after a piece it takes
// the notification: the agent's current unread counts, or nothing when none are due or none are unread.

/** One agent's pending notification. */
export class PendingNotification {
  private due = false;

  /** A message reached the agent. */
  messageArrived(): void {
    this.due = true;
  }

  /** A tool call ran: `showedUnread` settles the notification, `unreadLeft` makes it due again. */
  afterCall(execution: { readonly showedUnread?: boolean; readonly unreadLeft?: boolean }): void {
    if (execution.showedUnread === true) this.due = false;
    if (execution.unreadLeft === true) this.due = true;
  }

  /** Consumes a due notification: the unread counts `unreadBySender` gives, or null when none is due or nothing is unread. */
  take(unreadBySender: () => Record<string, number>): Record<string, number> | null {
    if (!this.due) return null;
    this.due = false;
    const unread = unreadBySender();
    return Object.keys(unread).length === 0 ? null : unread;
  }
}
