// TurnClock: remote pieces reach the harness in the order a one-token-per-step engine finishes them,
// whatever order the answers arrive in; a turn waits for requests that could still finish first; a
// cancelled piece finishes at the cancel's time, cut to what was sampled by then.
import { describe, expect, it } from 'vitest';
import { TurnClock } from '../../src/policy/turn-clock.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('TurnClock', () => {
  it('delivers by virtual finish time and issue order, not by arrival', async () => {
    const clock = new TurnClock();
    const delivered: string[] = [];
    const a = clock.issue();
    const b = clock.issue();
    const c = clock.issue();
    // Arrivals in reverse: c (3 tokens), then b (5), then a (3).
    clock.arrive(c, 3, (t) => delivered.push(`c@${t}`));
    await settle();
    expect(delivered).toEqual([]); // a and b could still finish at 1
    clock.arrive(b, 5, (t) => delivered.push(`b@${t}`));
    await settle();
    expect(delivered).toEqual([]);
    clock.arrive(a, 3, (t) => delivered.push(`a@${t}`));
    await settle();
    expect(delivered).toEqual(['a@3', 'c@3', 'b@5']);
    expect(clock.time).toBe(5);
  });

  it('stamps follow-up requests with the turn that triggered them', async () => {
    const clock = new TurnClock();
    const times: number[] = [];
    const first = clock.issue();
    clock.arrive(first, 4, () => {
      const next = clock.issue();
      times.push(next.issuedAt);
      clock.arrive(next, 2, (t) => times.push(t));
    });
    await settle();
    await settle();
    expect(times).toEqual([4, 6]);
  });

  it('finishes a cancelled request at the cancel, so an earlier delivery can cut a later piece', async () => {
    const clock = new TurnClock();
    const got: number[] = [];
    const long = clock.issue();
    const short = clock.issue();
    clock.arrive(long, 100, (t) => got.push(t));
    clock.arrive(short, 7, () => clock.cancel(long));
    await settle();
    await settle();
    expect(got).toEqual([7]); // the long piece ends at 7: 7 tokens of its 100
  });

  it('waits for a request that could finish first, and withdraws failed ones', async () => {
    const clock = new TurnClock();
    const got: string[] = [];
    const stuck = clock.issue();
    const quick = clock.issue();
    clock.arrive(quick, 1, () => got.push('quick'));
    await settle();
    expect(got).toEqual([]);
    clock.withdraw(stuck);
    await settle();
    expect(got).toEqual(['quick']);
  });
});
