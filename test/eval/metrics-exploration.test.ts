// Exploration metrics of Appendix M and K.3 on hand-built traces and a hand-built tree: room overlap
// (start excluded), branch claims and reports read from the scripted explorers' sentences, duplicate
// claims, false "exhausted" reports, and the exit's door at the first fork.
import { describe, expect, it } from 'vitest';
import { branchMentions, claimCountsOf, measureEpisode, roomOverlapOf } from '../../src/eval/metrics/index.js';
import type { ExplorationTree } from '../../src/tasks/index.js';
import { TraceBuilder } from './metrics-traces.js';

// Depth 1, three corridors of two rooms from the start R100: R11–R12, R21–R22, R31–R32. The exit is R22.
// The start lists its doors as R31, R11, R21, so the exit is behind the third listed door (index 2).
const TREE: ExplorationTree = {
  depth: 1,
  branching: 3,
  corridorLength: 2,
  start: 'R100',
  exit: 'R22',
  doors: new Map([
    ['R100', ['R31', 'R11', 'R21']],
    ['R11', ['R12', 'R100']],
    ['R12', ['R11']],
    ['R21', ['R100', 'R22']],
    ['R22', ['R21']],
    ['R31', ['R100', 'R32']],
    ['R32', ['R31']],
  ]),
};

describe('roomOverlapOf', () => {
  it('is (V − U)/V over the rooms each agent visited, the start excluded', () => {
    const trace = new TraceBuilder({ task: 'exploration', agents: ['a', 'b', 'c'] });
    // a: R11, R12, back through R11 to the start, then R21 → {R11, R12, R21}, 3 rooms.
    trace.move('a', 'R100', 'R11').move('a', 'R11', 'R12').move('a', 'R12', 'R11').move('a', 'R11', 'R100').move('a', 'R100', 'R21');
    // b: R11, R12 → 2 rooms. c never moves → 0.
    trace.move('b', 'R100', 'R11').move('b', 'R11', 'R12');
    // V = 3 + 2 = 5; U = |{R11, R12, R21}| = 3; overlap = 2/5.
    expect(roomOverlapOf(trace.end())).toBeCloseTo(0.4, 12);
  });

  it('is 0 when no two agents share a room and 1/2 when two agents walk the same path', () => {
    const apart = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] });
    apart.move('a', 'R100', 'R11').move('b', 'R100', 'R21').move('b', 'R21', 'R22');
    expect(roomOverlapOf(apart.end())).toBe(0);
    const together = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] });
    together.move('a', 'R100', 'R11').move('a', 'R11', 'R12').move('b', 'R100', 'R11').move('b', 'R11', 'R12');
    // V = 4, U = 2: 1/2.
    expect(roomOverlapOf(together.end())).toBe(0.5);
  });

  it('is undefined (null) when no agent moved', () => {
    expect(roomOverlapOf(new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] }).end())).toBeNull();
  });
});

describe('branchMentions', () => {
  it('reads every claim and report of a message with the scripted explorers’ wording', () => {
    const text = "Branch from R100 through R11 is exhausted; no exit. I followed it and checked every onward door before backtracking. I’m checking the branch from R100 through R31.";
    expect(branchMentions(text)).toEqual([
      { kind: 'claim', branch: { junction: 'R100', entry: 'R31' } },
      { kind: 'report', branch: { junction: 'R100', entry: 'R11' } },
    ]);
    expect(branchMentions('Where is the exit? I am near R100.')).toEqual([]);
  });
});

describe('claimCountsOf', () => {
  it('counts claims of branches another agent claimed first, and reports of branches holding the exit', () => {
    const trace = new TraceBuilder({ task: 'exploration', agents: ['a', 'b', 'c', 'd'] });
    trace.broadcast('a', "I'm checking the branch from R100 through R11."); // claim 1
    trace.broadcast('b', "I'm checking the branch from R100 through R11."); // claim 2, duplicate of a's
    trace.broadcast('c', "I'm checking the branch from R100 through R21."); // claim 3
    trace.broadcast('a', "I'm checking the branch from R100 through R21."); // claim 4, duplicate of c's
    trace.broadcast('c', "I'm checking the branch from R100 through R21."); // claim 5: c claimed R21 first, no duplicate
    trace.broadcast('a', "I'm checking the branch from R100 through R21."); // claim 6, duplicate of c's again
    // Reports: R11 branch has no exit (true report); R21 holds the exit R22 (false); walking back from R11
    // to R100 holds the exit (false); R11→R32 are not adjacent (not judged).
    trace.broadcast('a', 'Branch from R100 through R11 is exhausted; no exit.');
    trace.broadcast('b', 'Branch from R100 through R21 is exhausted; no exit.');
    trace.broadcast('d', 'The branch from R11 through R100 is exhausted.');
    trace.broadcast('d', 'Branch from R11 through R32 is exhausted.');
    expect(claimCountsOf({ episode: trace.end(), tree: TREE })).toEqual({ claims: 6, duplicateClaims: 3, reports: 4, falseExhaustedReports: 2, falseReportRead: false });
  });

  it('tells whether some agent read a false report (App. K.3)', () => {
    const trace = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] });
    const truthful = trace.broadcast('a', 'Branch from R100 through R11 is exhausted; no exit.');
    trace.read('b', [truthful]);
    expect(claimCountsOf({ episode: trace.end(), tree: TREE }).falseReportRead).toBe(false);
    const misled = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] });
    const lie = misled.broadcast('a', 'Branch from R100 through R21 is exhausted; no exit.');
    misled.read('b', [lie]);
    expect(claimCountsOf({ episode: misled.end(), tree: TREE })).toMatchObject({ reports: 1, falseExhaustedReports: 1, falseReportRead: true });
  });

  it('does not count a repeated claim of an agent’s own branch', () => {
    const trace = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'] });
    trace.broadcast('a', "I'm checking the branch from R100 through R11.");
    trace.broadcast('a', "I'm checking the branch from R100 through R11.");
    expect(claimCountsOf({ episode: trace.end(), tree: TREE })).toMatchObject({ claims: 2, duplicateClaims: 0 });
  });
});

describe('measureEpisode (exploration)', () => {
  it('records the exit door at the first fork, overlap and claims, and leaves aggregation fields null', () => {
    const trace = new TraceBuilder({ task: 'exploration', agents: ['a', 'b'], problemId: 'tree/0' });
    trace.broadcast('a', "I'm checking the branch from R100 through R21.");
    trace.move('a', 'R100', 'R21').move('b', 'R100', 'R21').move('a', 'R21', 'R22');
    const metrics = measureEpisode({ episode: trace.end({ success: true, tokens: [30, 12] }), problem: { id: 'tree/0', tree: TREE } as never });
    expect(metrics).toEqual({
      success: true,
      tokens: 42,
      messageCalls: 1,
      deliveries: 1,
      centralization: 1, // in-degrees 0 and 1 at N = 2: (1 − 0)/1
      reciprocity: 0,
      weightedReciprocity: 0,
      sendGini: 0.5, // [1, 0]: 2/(2·2·1)
      readBeforeFirstSendShare: 0,
      readBeforeSendShare: 0, // a sent before any read; b neither read nor sent
      structure: null,
      numbersSentShare: null,
      numbersSentAndReadShare: null,
      roomOverlap: 1 / 3, // V = 2 + 1 = 3, U = 2
      exitDoor: 2,
      claims: 1,
      duplicateClaims: 0,
      reports: 0,
      falseExhaustedReports: 0,
      falseReportRead: 0,
      falseReportShare: null, // no reports
    });
  });
});
