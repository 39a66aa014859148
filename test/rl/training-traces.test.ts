// The training traces an update keeps (trainingTraceShare, App. K.1): every episode at share 1, else
// a seeded sample of ⌈share · episodes⌉ in group order, the same for the same seed.
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../src/harness/trace-events.js';
import type { RolloutGroup } from '../../src/rl/collector.js';
import { sampledTraces } from '../../src/rl/rl-loop.js';

/** Groups of episodes whose traces are one marker event each, "g/e". */
function groups(count: number, perGroup: number): RolloutGroup[] {
  return Array.from({ length: count }, (_, g) => ({
    index: g,
    episodes: Array.from({ length: perGroup }, (_, e) => ({ trace: [{ type: 'idle', agent: `${g}/${e}` } as TraceEvent] })),
  })) as unknown as RolloutGroup[];
}

const agents = (events: readonly TraceEvent[]) => events.map((event) => (event as { agent: string }).agent);

describe('sampledTraces', () => {
  it('keeps every episode at share 1, in group and episode order', () => {
    expect(agents(sampledTraces(groups(2, 3), 1, 's'))).toEqual(['0/0', '0/1', '0/2', '1/0', '1/1', '1/2']);
  });

  it('keeps a seeded sample of ⌈share · episodes⌉ otherwise, in order, and at least one', () => {
    const sample = agents(sampledTraces(groups(4, 5), 0.2, 'run/0/traces/3'));
    expect(sample).toHaveLength(4);
    const all = agents(sampledTraces(groups(4, 5), 1, 'x'));
    expect(sample.map((name) => all.indexOf(name))).toEqual([...sample.map((name) => all.indexOf(name))].sort((a, b) => a - b));
    expect(agents(sampledTraces(groups(4, 5), 0.2, 'run/0/traces/3'))).toEqual(sample);
    expect(agents(sampledTraces(groups(4, 5), 0.2, 'run/0/traces/4'))).not.toEqual(sample);
    expect(sampledTraces(groups(1, 3), 0.01, 's')).toHaveLength(1);
  });
});
