// Message metrics of Appendix M and K.2 on hand-built traces, each value worked out by hand in the
// comments: message calls and deliveries, the message graph's centralization and reciprocity, the
// Gini of sends, structure classes, reading before the first send, and the sharing of private numbers.
import { describe, expect, it } from 'vitest';
import {
  centralization,
  communicationStructureOf,
  gini,
  messageCountsOf,
  messageGraphOf,
  numberSharingOf,
  readBeforeFirstSendShareOf,
  reciprocity,
  statedNumbers,
} from '../../src/eval/metrics/index.js';
import { TraceBuilder } from './metrics-traces.js';

const FOUR = ['a', 'b', 'c', 'd'];

// a broadcasts (a→b, a→c, a→d), b writes to a twice, c writes to a once.
function mixedEpisode() {
  const trace = new TraceBuilder({ task: 'aggregation', agents: FOUR });
  trace.broadcast('a');
  trace.direct('b', 'a');
  trace.direct('b', 'a');
  trace.direct('c', 'a');
  return trace.end();
}

describe('messageCountsOf', () => {
  it('counts a broadcast as one call and N − 1 deliveries', () => {
    // Calls: 1 broadcast + 3 direct = 4. Deliveries: 3 + 1 + 1 + 1 = 6; by sender a 3, b 2, c 1, d 0.
    expect(messageCountsOf(mixedEpisode())).toEqual({ calls: 4, deliveries: 6, deliveriesBySender: [3, 2, 1, 0] });
  });

  it('is zero without messages', () => {
    expect(messageCountsOf(new TraceBuilder({ task: 'aggregation', agents: FOUR }).end())).toEqual({ calls: 0, deliveries: 0, deliveriesBySender: [0, 0, 0, 0] });
  });
});

describe('messageGraphOf', () => {
  it('has one edge per ordered pair with the number of messages that reached the recipient', () => {
    expect(messageGraphOf(mixedEpisode())).toEqual({
      agents: FOUR,
      edges: [
        { from: 'a', to: 'b', count: 1 },
        { from: 'a', to: 'c', count: 1 },
        { from: 'a', to: 'd', count: 1 },
        { from: 'b', to: 'a', count: 2 },
        { from: 'c', to: 'a', count: 1 },
      ],
    });
  });
});

describe('centralization', () => {
  it('is Σ(k* − k_j)/(N − 1)² over in-degrees', () => {
    // In-degrees: a 2 (from b, c), b 1, c 1, d 1; k* = 2; Σ = 0 + 1 + 1 + 1 = 3; 3 / 3² = 1/3.
    expect(centralization(messageGraphOf(mixedEpisode()))).toBeCloseTo(1 / 3, 12);
  });

  it('is 1 when one agent receives from everyone and nobody else receives', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    for (const sender of ['b', 'c', 'd']) trace.direct(sender, 'a');
    // In-degrees 3, 0, 0, 0: (0 + 3 + 3 + 3) / 9 = 1.
    expect(centralization(messageGraphOf(trace.end()))).toBe(1);
  });

  it('is 0 when everyone broadcasts', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    for (const sender of FOUR) trace.broadcast(sender);
    expect(centralization(messageGraphOf(trace.end()))).toBe(0);
  });

  it('is undefined (null) without messages and for a team of one', () => {
    expect(centralization(messageGraphOf(new TraceBuilder({ task: 'aggregation', agents: FOUR }).end()))).toBeNull();
    expect(centralization(messageGraphOf(new TraceBuilder({ task: 'aggregation', agents: ['a'] }).end()))).toBeNull();
  });
});

describe('reciprocity', () => {
  it('is the fraction of edges whose reverse exists', () => {
    // Edges a→b, a→c, a→d, b→a, c→a: all but a→d have their reverse: 4/5.
    expect(reciprocity(messageGraphOf(mixedEpisode()))).toBeCloseTo(0.8, 12);
  });

  it('is 0 for a star of one-way messages, 1 when everyone broadcasts, null without messages', () => {
    const star = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    for (const sender of ['b', 'c', 'd']) star.direct(sender, 'a');
    expect(reciprocity(messageGraphOf(star.end()))).toBe(0);
    const all = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    for (const sender of FOUR) all.broadcast(sender);
    expect(reciprocity(messageGraphOf(all.end()))).toBe(1);
    expect(reciprocity(messageGraphOf(new TraceBuilder({ task: 'aggregation', agents: FOUR }).end()))).toBeNull();
  });
});

describe('gini', () => {
  it('is Σ|x_i − x_j| / (2 n Σx) of the outgoing deliveries', () => {
    // [3, 2, 1, 0]: unordered differences 1+2+3+1+2+1 = 10, ordered 20; 2·4·6 = 48; 20/48 = 5/12.
    expect(gini(messageCountsOf(mixedEpisode()).deliveriesBySender)).toBeCloseTo(5 / 12, 12);
  });

  it('is 0 for equal sending, (n − 1)/n when one agent sends everything, null for nothing or one agent', () => {
    expect(gini([2, 2, 2])).toBe(0);
    expect(gini([6, 0, 0, 0])).toBe(0.75);
    expect(gini([0, 0, 0])).toBeNull();
    expect(gini([5])).toBeNull();
  });
});

describe('communicationStructureOf', () => {
  const classify = (build: (trace: TraceBuilder) => void) => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: ['a', 'b', 'c'] });
    build(trace);
    return communicationStructureOf(trace.end());
  };

  it('is silentAgent when an agent never sends, even if others converse', () => {
    expect(classify((t) => (t.broadcast('a'), t.direct('b', 'a')))).toBe('silentAgent');
    expect(communicationStructureOf(new TraceBuilder({ task: 'aggregation', agents: ['a'] }).end())).toBe('silentAgent');
  });

  it('is conversation when all send and one message is direct', () => {
    expect(classify((t) => (t.broadcast('a'), t.broadcast('b'), t.direct('c', 'a')))).toBe('conversation');
  });

  it('is repeatedBroadcasts when all only broadcast and one broadcasts twice', () => {
    expect(classify((t) => (t.broadcast('a'), t.broadcast('b'), t.broadcast('c'), t.broadcast('a')))).toBe('repeatedBroadcasts');
  });

  it('is oneBroadcastEach when every agent broadcasts exactly once', () => {
    expect(classify((t) => (t.broadcast('c'), t.broadcast('a'), t.broadcast('b')))).toBe('oneBroadcastEach');
  });
});

describe('readBeforeFirstSendShareOf', () => {
  it('counts sending agents whose first non-empty read precedes their first send', () => {
    const trace = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    const first = trace.broadcast('a'); // a sends first, reads later: no.
    trace.read('b', [first]).broadcast('b'); // b reads a message, then sends: yes.
    trace.read('c', []).broadcast('c'); // c's read returned nothing: no.
    trace.read('a', [first + 1]);
    trace.read('d', [first]); // d never sends: not counted.
    expect(readBeforeFirstSendShareOf(trace.end())).toBeCloseTo(1 / 3, 12);
  });

  it('is undefined (null) when nobody sends', () => {
    expect(readBeforeFirstSendShareOf(new TraceBuilder({ task: 'aggregation', agents: FOUR }).read('a', []).end())).toBeNull();
  });
});

describe('statedNumbers', () => {
  it('reads digits and English words, a tens word with its unit as one number', () => {
    expect([...statedNumbers('My private number is forty-two (42).')]).toEqual([42]);
    expect([...statedNumbers('Forty two and seventeen; twenty. Ninety-Nine!')].sort((x, y) => x - y)).toEqual([17, 20, 42, 99]);
    expect([...statedNumbers('I have 7 and one more')].sort((x, y) => x - y)).toEqual([1, 7]);
  });

  it('ignores agent names, room labels, 0 and numbers above 99', () => {
    expect(statedNumbers('agent_17 in R4821 sent 0 of 100 and anyone knows')).toEqual(new Set());
  });
});

describe('numberSharingOf', () => {
  it('counts own numbers sent and (owner, reader) pairs where the owner’s message was read', () => {
    // Numbers: a 42, b 7, c 42, d 15.
    const trace = new TraceBuilder({ task: 'aggregation', agents: FOUR });
    const fromA = trace.broadcast('a', 'My private number is forty-two (42).'); // states a's number
    const fromB = trace.broadcast('b', 'Mine is seven.'); // states b's number
    const fromC = trace.direct('c', 'a', 'I hold forty two'); // states c's number (42, like a's)
    const fromD = trace.broadcast('d', 'What is your number? agent_15 asking'); // agent_15 is a name, not 15
    trace.read('a', [fromB, fromC, fromD]); // pairs (b, a), (c, a)
    trace.read('b', [fromA, fromD]); // pair (a, b)
    trace.read('d', [fromA]); // pair (a, d)
    const sharing = numberSharingOf({ episode: trace.end(), numbers: [42, 7, 42, 15] });
    // Sent: a, b, c of 4 = 3/4. Read pairs: 4 of 4·3 = 12 = 1/3.
    expect(sharing.numbersSentShare).toBe(0.75);
    expect(sharing.numbersSentAndReadShare).toBeCloseTo(1 / 3, 12);
  });

  it('is undefined (null) for a team of one', () => {
    expect(numberSharingOf({ episode: new TraceBuilder({ task: 'aggregation', agents: ['a'] }).end(), numbers: [5] })).toEqual({
      numbersSentShare: null,
      numbersSentAndReadShare: null,
    });
  });
});
