// Deterministic delivery of remote pieces: a discrete-event clock that hands results to the harness in
// the order an engine stepping one token per step would finish them, whatever order and speed the
// servers answer in. The in-process engine gets this from lockstep (docs/determinism.md); a remote
// server cannot be stepped from here, so the clock simulates the steps instead.
//
// Virtual time counts engine steps. A request issued at time t whose piece has L tokens finishes at
// t + max(L, 1); a piece cancelled at time T (the episode ended) finishes at T with the T − t tokens an
// engine would have sampled by then. Turn T is delivered once every result finishing at T is in and no
// request still out could finish at or before T (one issued at t finishes at t + 1 at the earliest);
// results of a turn are delivered in the order their requests were issued. The next turn waits for a
// setImmediate, so every reaction of a turn (tool calls, messages, follow-up requests, new episodes)
// has run and its requests carry the turn's time — as the lockstep gate waits before the next step.

/** One request on the clock. */
export interface TurnTicket {
  /** Issue order (breaks ties within a turn). */
  readonly order: number;
  /** Virtual time it was issued at. */
  readonly issuedAt: number;
}

interface OpenTicket extends TurnTicket {
  /** When it finishes, once known (its result arrived, or it was cancelled). */
  finishAt: number | null;
  /** Hands the result over, told the finish time (a cancelled piece is truncated to finishAt − issuedAt tokens). */
  deliver: ((finishAt: number) => void) | null;
}

/** The clock shared by every request of one remote policy. */
export class TurnClock {
  private now = 0;
  private issued = 0;
  private readonly open = new Set<OpenTicket>();
  private scheduled = false;

  /** The current virtual time. */
  get time(): number {
    return this.now;
  }

  /** A new request, issued now. */
  issue(): TurnTicket {
    const ticket: OpenTicket = { order: this.issued++, issuedAt: this.now, finishAt: null, deliver: null };
    this.open.add(ticket);
    return ticket;
  }

  /** Its result arrived with `tokens` tokens; `deliver` runs in its turn. */
  arrive(ticket: TurnTicket, tokens: number, deliver: (finishAt: number) => void): void {
    const open = ticket as OpenTicket;
    if (!this.open.has(open)) return;
    if (open.finishAt === null) open.finishAt = open.issuedAt + Math.max(tokens, 1);
    open.deliver = deliver;
    this.schedule();
  }

  /** The episode ended: the request finishes now (its result, once it arrives, is cut to what was sampled by now). */
  cancel(ticket: TurnTicket): void {
    const open = ticket as OpenTicket;
    if (!this.open.has(open)) return;
    open.finishAt = Math.min(open.finishAt ?? this.now, this.now);
    this.schedule();
  }

  /** Takes a request off the clock without a turn (it failed: an infrastructure error, not a result). */
  withdraw(ticket: TurnTicket): void {
    this.open.delete(ticket as OpenTicket);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    let turn = Infinity;
    for (const ticket of this.open) if (ticket.finishAt !== null && ticket.finishAt < turn) turn = ticket.finishAt;
    if (turn === Infinity) return;
    const due: OpenTicket[] = [];
    for (const ticket of this.open) {
      if (ticket.finishAt === null && ticket.issuedAt + 1 <= turn) return; // could still finish first
      if (ticket.finishAt === turn) {
        if (ticket.deliver === null) return; // cancelled, its result not in yet
        due.push(ticket);
      }
    }
    this.now = turn;
    due.sort((a, b) => a.order - b.order);
    for (const ticket of due) {
      this.open.delete(ticket);
      (ticket.deliver as (finishAt: number) => void)(turn);
    }
    this.schedule();
  }
}
