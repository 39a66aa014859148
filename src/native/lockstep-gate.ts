// JavaScript's half of the engine's lockstep mode (native/engine/engine.h, docs/determinism.md).
// The engine runs no step until it is told that every turn of results it delivered has been
// handled, and a new request holds it until the next such word. "Handled" means every reaction
// the turn's settled promises started has run and queued its follow-up requests. Those reactions
// are promise continuations (microtasks), so all of them have run by the time a setImmediate
// callback scheduled from the turn fires: the gate proceeds from there. A hold defers proceeding
// (a weight swap applied at an event of the collection, for example) until it is released.

/** What the gate drives: the native engine's proceed(). */
interface Proceeding {
  proceed(turn: number): void;
}

/** Tells a lockstep engine when JavaScript has caught up with it. */
export class LockstepGate {
  private native: Proceeding | null = null;
  private lastTurn = 0;
  private scheduled = false;
  private holds = 0;

  /** The engine's onTurn callback: a turn's promises are settled; proceed once their reactions have run. */
  readonly onTurn = (turn: number): void => {
    this.lastTurn = Math.max(this.lastTurn, turn);
    this.schedule();
  };

  /** Binds the gate to the engine it answers (once the engine exists). */
  attach(native: Proceeding): void {
    this.native = native;
  }

  /** A request reached the engine (which holds until told to proceed): proceed after this turn of JavaScript. */
  schedule(): void {
    if (this.scheduled || this.native === null) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.holds === 0) this.native?.proceed(this.lastTurn);
    });
  }

  /** Keeps the engine from starting another step until the returned function is called (idempotent). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds === 0) this.schedule();
    };
  }
}
