// The Appendix L explorer as a script: it acts only on what it observed and read. A small driver plays
// the world (a hand-built tree and the task's own observations) and teammates' messages, so every rule
// is checked in isolation: claims, preferring unclaimed branches, yielding a doubly claimed branch,
// skipping reported branches, backing out of one, reporting exhausted branches, reading when notified.

import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/common/index.js';
import { runEpisode } from '../../src/harness/index.js';
import { ScriptedPolicy, type ContextItem, type ScriptedAction, type ScriptedAgent } from '../../src/policy/index.js';
import { explorationTask, generateTree, observeRoom, type ExplorationTree, claimText, explorerScript, reportText } from '../../src/tasks/index.js';
import { qwen3Tokenizer } from '../harness/helpers.js';

// R100 is the start; R200 and R300 lead to corridors R200-R210-R220 and R300-R310-R320, whose ends fork into
// two dead ends each; R322 is the exit.
const tree: ExplorationTree = {
  depth: 2,
  branching: 2,
  corridorLength: 3,
  start: 'R100',
  exit: 'R322',
  doors: new Map<string, readonly string[]>([
    ['R100', ['R200', 'R300']],
    ['R200', ['R100', 'R210']],
    ['R210', ['R200', 'R220']],
    ['R220', ['R210', 'R221', 'R222']],
    ['R221', ['R220']],
    ['R222', ['R220']],
    ['R300', ['R100', 'R310']],
    ['R310', ['R300', 'R320']],
    ['R320', ['R310', 'R321', 'R322']],
    ['R321', ['R320']],
    ['R322', ['R320']],
  ]),
};

class Driver {
  readonly agent: ScriptedAgent;
  room = 'R100';
  private from: string | null = null;

  constructor(
    readonly name: string,
    communication: boolean,
    seed: string,
  ) {
    this.agent = explorerScript.start({
      prompt: {
        kind: 'prompt',
        agentName: name,
        teammates: communication ? ['agent_1', 'agent_9'] : [],
        communication,
        toolNames: communication ? ['message', 'read_messages', 'check_notifications', 'move', 'look'] : ['move', 'look'],
        system: '',
        user: `You are in the start room:\n${observeRoom({ tree, room: 'R100', arrivedFrom: null })}`,
      },
      rng: createRng(seed),
    });
  }

  /** Decides, carries out the action in the world and feeds its result back; returns the action. */
  step(): ScriptedAction {
    const action = this.agent.decide();
    if (action.kind !== 'call') return action;
    let output = '{}';
    if (action.name === 'move') {
      const target = String(action.arguments.room);
      expect(tree.doors.get(this.room)).toContain(target);
      this.from = this.room;
      this.room = target;
      output = observeRoom({ tree, room: this.room, arrivedFrom: this.from });
    }
    const messages = action.name === 'read_messages' ? this.inbox.splice(0) : undefined;
    this.agent.observe({ kind: 'tool_result', callId: 0, name: action.name, arguments: action.arguments, ok: true, output, ...(messages ? { messages } : {}) });
    return action;
  }

  private inbox: Array<{ id: number; from: string; text: string }> = [];

  /** A teammate's message arrives: it is queued and the agent is notified. */
  receive(from: string, text: string): void {
    this.inbox.push({ id: this.inbox.length, from, text });
    const item: ContextItem = { kind: 'notification', unreadBySender: { [from]: this.inbox.length } };
    this.agent.observe(item);
  }

  /** Steps until the explorer stands in `room` (at most `limit` steps). */
  walkTo(room: string, limit = 40): ScriptedAction[] {
    const actions: ScriptedAction[] = [];
    while (this.room !== room && actions.length < limit) actions.push(this.step());
    return actions;
  }
}

const firstMessage = (actions: ScriptedAction[]) => actions.find((action) => action.kind === 'call' && action.name === 'message');

describe('scripted explorer', () => {
  it('announces the branch it takes at a junction, then enters it', () => {
    const driver = new Driver('agent_5', true, 'a');
    const claim = driver.step();
    expect(claim.kind === 'call' && claim.name).toBe('message');
    const text = claim.kind === 'call' ? String(claim.arguments.text) : '';
    const entry = /through (R\d+)\./.exec(text)?.[1] as string;
    expect(text).toBe(claimText({ junction: 'R100', entry }));
    expect(driver.step()).toMatchObject({ kind: 'call', name: 'move', arguments: { room: entry } });
  });

  it('moves without messages when messaging is off', () => {
    const driver = new Driver('agent_5', false, 'a');
    expect(driver.step()).toMatchObject({ kind: 'call', name: 'move' });
  });

  it('reads as soon as it is notified', () => {
    const driver = new Driver('agent_5', true, 'a');
    driver.receive('agent_9', 'hello');
    expect(driver.step()).toMatchObject({ kind: 'call', name: 'read_messages', thought: 'Unread messages; read them.' });
  });

  it('prefers a branch no teammate claimed', () => {
    for (const seed of ['a', 'b', 'c', 'd']) {
      const driver = new Driver('agent_5', true, seed);
      driver.receive('agent_9', claimText({ junction: 'R100', entry: 'R200' }));
      driver.step();
      expect(driver.step()).toMatchObject({ name: 'message', arguments: { text: claimText({ junction: 'R100', entry: 'R300' }) } });
    }
  });

  it('skips a branch a teammate reported exhausted', () => {
    for (const seed of ['a', 'b', 'c', 'd']) {
      const driver = new Driver('agent_5', false, seed);
      driver.agent.observe({ kind: 'tool_result', callId: 0, name: 'read_messages', arguments: {}, ok: true, output: '', messages: [{ id: 0, from: 'agent_9', text: reportText({ junction: 'R100', entry: 'R200' }, false) }] });
      const walk = driver.walkTo('R322');
      expect(walk.some((action) => action.kind === 'call' && action.arguments.room === 'R200')).toBe(false);
    }
  });

  it('backs out of a branch a teammate reports exhausted while it is inside, saying why', () => {
    const driver = new Driver('agent_5', true, 'a');
    driver.step();
    driver.step();
    const entry = driver.room;
    driver.step();
    driver.receive('agent_1', reportText({ junction: 'R100', entry }, false));
    expect(driver.step()).toMatchObject({ name: 'read_messages' });
    expect(driver.step()).toMatchObject({
      name: 'move',
      arguments: { room: entry },
      thought: `agent_1 reported R100 through ${entry} exhausted. I am inside that branch; backtrack toward its entry.`,
    });
    driver.walkTo('R100');
    const next = driver.step();
    expect(next.kind === 'call' && String(next.arguments.text)).toBe(claimText({ junction: 'R100', entry: entry === 'R200' ? 'R300' : 'R200' }));
  });

  it('yields a branch a teammate with an earlier name claimed too, while still in its first corridor', () => {
    const driver = new Driver('agent_5', true, 'a');
    driver.step();
    driver.step();
    const entry = driver.room;
    driver.receive('agent_1', claimText({ junction: 'R100', entry }));
    driver.step();
    expect(driver.step()).toMatchObject({ name: 'move', arguments: { room: 'R100' }, thought: `agent_1 claimed R100 through ${entry} first; go back and take a free branch.` });
  });

  it('keeps a doubly claimed branch when its own name sorts first', () => {
    const driver = new Driver('agent_1', true, 'a');
    driver.step();
    driver.step();
    const entry = driver.room;
    driver.receive('agent_9', claimText({ junction: 'R100', entry }));
    driver.step();
    const next = driver.step();
    expect(next.kind === 'call' && next.arguments.room).not.toBe('R100');
  });

  it('reports a branch once every onward door below it is checked', () => {
    const driver = new Driver('agent_5', true, 'a');
    const actions = driver.walkTo('R100', 2).concat(driver.walkTo('__never__', 30));
    const report = actions.find((action) => action.kind === 'call' && String(action.arguments.text ?? '').startsWith('Branch'));
    expect(report).toBeDefined();
    expect(report?.kind === 'call' && report.arguments.text).toMatch(/^Branch from R100 through R[23]00 is exhausted; no exit\. I followed it and checked every onward door before backtracking\.$/);
    expect(firstMessage(actions)).toBeDefined();
  });

  it('finds the exit alone on depth-3 trees given a full search’s allowance, from its own observations only', async () => {
    const policy = new ScriptedPolicy({ tokenizer: qwen3Tokenizer(), script: explorerScript });
    for (let index = 0; index < 4; index += 1) {
      const problem = { id: `solo/${index}`, tree: generateTree({ depth: 3, rng: createRng(`solo/${index}`) }) };
      const result = await runEpisode({ task: explorationTask, problem, n: 1, policy, seed: index, communication: false, workAllowance: 60_000, contextLimit: 200_000 });
      expect(result.teamSuccess).toBe(true);
      const moves = result.trace.filter((event) => event.type === 'task_event').length;
      expect(moves).toBeLessThanOrEqual(780);
    }
  });
});
