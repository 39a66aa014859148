// Tests of an exploration episode: observations, private positions, stable door order, the exit ending
// the episode, the prompts, and bad tool calls rejected without throwing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createExplorationEpisode } from '../../src/tasks/exploration/episode.js';
import type { ExplorationProblem } from '../../src/tasks/exploration/problem.js';
import {
  EXPLORATION_RULES,
  EXPLORATION_RULES_NO_COMMUNICATION,
  INDEPENDENT_EXPLORATION_LINE,
} from '../../src/tasks/exploration/prompts.js';
import { exitPath, onwardDoors } from '../../src/tasks/exploration/tree-index.js';
import { generateTree } from '../../src/tasks/exploration/tree.js';
import { COLLABORATION_PROMPT } from '../../src/tasks/prompts/collaboration.js';
import { createRng } from '../../src/common/random.js';
import type { CreateEpisodeOptions, TaskEpisode } from '../../src/tasks/task.js';

const tree = generateTree({ depth: 2, rng: createRng('episode-tree') });
const problem: ExplorationProblem = { id: 'exploration-d2/test/0', tree };
const names = ['agent_8', 'agent_21', 'agent_2'];

function episode(overrides: Partial<CreateEpisodeOptions<ExplorationProblem>> = {}): TaskEpisode {
  return createExplorationEpisode({
    problem,
    agentNames: names,
    communication: true,
    rng: createRng('roster'),
    workAllowance: 8192,
    contextLimit: 32768,
    tokenCostWeight: 0.25,
    ...overrides,
  });
}

const doorsOf = (room: string): readonly string[] => tree.doors.get(room) ?? [];
const quoted = (rooms: readonly string[]): string => rooms.map((room) => `"${room}"`).join(', ');

describe('observations', () => {
  it('shows the start room in the first user turn, arrived_from null', () => {
    const first = episode().firstUserMessage(1);
    expect(first).toBe(
      'Solve this problem with your team: find the exit of the maze. You are in the start room:\n' +
        `{"room": "${tree.start}", "doors": [${quoted(doorsOf(tree.start))}], "exit": false, "arrived_from": null}`,
    );
  });

  it('moves through a door and shows the new room in the paper format', () => {
    const run = episode();
    const target = doorsOf(tree.start)[0];
    const result = run.callTool({ agentIndex: 0, name: 'move', args: { room: target } });
    expect(result).toEqual({
      ok: true,
      output: `{"room": "${target}", "doors": [${quoted(doorsOf(target))}], "exit": false, "arrived_from": "${tree.start}"}`,
      event: { type: 'move', from: tree.start, to: target, exit: false },
    });
  });

  it('keeps positions private: one agent moving leaves the others in the start room', () => {
    const run = episode();
    run.callTool({ agentIndex: 0, name: 'move', args: { room: doorsOf(tree.start)[2] } });
    const look = run.callTool({ agentIndex: 1, name: 'look', args: {} });
    expect(look.ok).toBe(true);
    expect(JSON.parse(look.output)).toMatchObject({ room: tree.start, arrived_from: null });
    expect(look.event).toEqual({ type: 'look', room: tree.start });
  });

  it('lists the same doors in the same order on every visit and for every agent', () => {
    const run = episode();
    const entry = doorsOf(tree.start)[1];
    const first = run.callTool({ agentIndex: 0, name: 'move', args: { room: entry } }).output;
    const next = onwardDoors(tree, entry)[0];
    run.callTool({ agentIndex: 0, name: 'move', args: { room: next } });
    const back = run.callTool({ agentIndex: 0, name: 'move', args: { room: entry } }).output;
    const other = run.callTool({ agentIndex: 2, name: 'move', args: { room: entry } }).output;
    const doorsSeen = [first, back, other].map((text) => (JSON.parse(text) as { doors: string[] }).doors);
    expect(doorsSeen[1]).toEqual(doorsSeen[0]);
    expect(doorsSeen[2]).toEqual(doorsSeen[0]);
    expect(JSON.parse(back)).toMatchObject({ arrived_from: next });
  });

  it('adds a notice at a dead end that is not the exit', () => {
    const run = episode();
    const exitBranch = exitPath(tree)[1];
    const otherEntry = doorsOf(tree.start).find((door) => door !== exitBranch) as string;
    let room = tree.start;
    let next = otherEntry;
    let output = '';
    while (next !== undefined) {
      output = run.callTool({ agentIndex: 0, name: 'move', args: { room: next } }).output;
      room = next;
      next = onwardDoors(tree, room)[0];
    }
    const back = doorsOf(room)[0];
    expect(output).toBe(
      `{"room": "${room}", "doors": ["${back}"], "exit": false, "arrived_from": "${back}", ` +
        `"notice": "Dead end: the only door leads back to ${back}."}`,
    );
  });

  it('ends the episode when an agent moves into the exit, and refuses moves afterwards', () => {
    const run = episode();
    const path = exitPath(tree);
    let last = run.callTool({ agentIndex: 2, name: 'look', args: undefined });
    for (const room of path.slice(1)) {
      expect(last.endsEpisode).toBeUndefined();
      last = run.callTool({ agentIndex: 2, name: 'move', args: { room } });
      expect(last.ok).toBe(true);
    }
    expect(last.endsEpisode).toBe(true);
    expect(last.event).toEqual({ type: 'move', from: path[19], to: tree.exit, exit: true });
    expect(JSON.parse(last.output)).toMatchObject({ room: tree.exit, exit: true, notice: 'This is the exit. The task is solved for the whole team.' });
    expect(run.agentSucceeded(2)).toBe(true);
    expect(run.agentSucceeded(0)).toBe(false);
    expect(run.teamSucceeded()).toBe(true);
    expect(run.callTool({ agentIndex: 0, name: 'look', args: {} }).ok).toBe(false);
  });

  it('takes no final answer and never grades text', () => {
    const run = episode();
    expect(run.finalPrompt(0)).toBeNull();
    expect(run.gradeAnswer({ agentIndex: 0, text: `I found the exit: ${tree.exit}` })).toBe(false);
    expect(run.teamSucceeded()).toBe(false);
  });
});

describe('bad tool calls', () => {
  it('rejects a room that is not a door of the current room and stays put', () => {
    const run = episode();
    const far = exitPath(tree)[5];
    const result = run.callTool({ agentIndex: 0, name: 'move', args: { room: far } });
    expect(result).toEqual({
      ok: false,
      output: `{"error": "'${far}' is not a door of your current room ${tree.start}. Doors: ${doorsOf(tree.start).join(', ')}."}`,
    });
    expect(JSON.parse(run.callTool({ agentIndex: 0, name: 'look', args: {} }).output)).toMatchObject({ room: tree.start });
  });

  it('names the problem with missing, extra and wrongly typed arguments and unknown tools', () => {
    const run = episode();
    const error = (name: unknown, args: unknown): string =>
      (JSON.parse(run.callTool({ agentIndex: 0, name: name as string, args }).output) as { error: string }).error;
    expect(error('move', {})).toBe('tool "move" is missing required argument "room"; its arguments are: room');
    expect(error('move', undefined)).toBe('tool "move" is missing required argument "room"; its arguments are: room');
    expect(error('move', { room: 12 })).toBe('argument "room" of tool "move" must be a string, got the integer 12');
    expect(error('move', { room: doorsOf(tree.start)[0], speed: 2 })).toBe('tool "move" has no argument "speed"; its arguments are: room');
    expect(error('look', { room: 'R1' })).toBe('tool "look" has no argument "room"; it takes no arguments');
    expect(error('look', 'now')).toBe('tool call "arguments" must be a JSON object, got a string');
    expect(error('fly', {})).toBe('unknown tool "fly"; available tools: move, look');
    expect(error('message', { to: 'all', text: 'hi' })).toBe('unknown tool "message"; available tools: move, look');
    expect(error(7, {})).toBe('unknown tool (the integer 7, not a name); available tools: move, look');
  });

  it('never throws, whatever the name and arguments (fast-check)', () => {
    const run = episode();
    const doors = [...tree.doors.keys()];
    const name = fc.oneof(fc.constantFrom('move', 'look', '__proto__', 'constructor'), fc.string(), fc.anything());
    const args = fc.oneof(
      fc.anything(),
      fc.record({ room: fc.oneof(fc.constantFrom(...doors), fc.string(), fc.anything()) }),
      fc.dictionary(fc.string(), fc.anything()),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), name, args, (agentIndex, toolName, toolArgs) => {
        const result = run.callTool({ agentIndex, name: toolName as string, args: toolArgs });
        expect(typeof result.ok).toBe('boolean');
        const parsed = JSON.parse(result.output) as Record<string, unknown>;
        if (result.ok) expect(typeof parsed.room).toBe('string');
        else expect(typeof parsed.error).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('exploration prompts', () => {
  it('builds the communicating system prompt from the collaboration prompt, rules, roster and allowance', () => {
    const run = episode();
    expect(run.systemPrompt(0)).toBe(
      [
        COLLABORATION_PROMPT,
        EXPLORATION_RULES,
        `Your name is agent_8. Your teammates are: ${run.teammates(0).join(', ')}.`,
        'Your generation allowance is 8192 tokens; your context window is 32768 tokens, including observations.',
      ].join('\n\n'),
    );
    expect([...run.teammates(0)].sort()).toEqual(['agent_2', 'agent_21']);
  });

  it('keeps the paper wording of the rules and the collaboration prompt', () => {
    expect(EXPLORATION_RULES.startsWith('You are exploring a maze of rooms connected by doors to find the exit. Use native tools:')).toBe(true);
    expect(EXPLORATION_RULES.endsWith('If you end a response without a tool call, you wait until a partner sends you a message.')).toBe(true);
    expect(COLLABORATION_PROMPT.startsWith('You are a decentralized team working together to solve the SAME complete task')).toBe(true);
    expect(COLLABORATION_PROMPT.endsWith('only calling message sends information. This protocol applies unchanged across tasks.')).toBe(true);
  });

  it('replaces the collaboration prompt and teammates without communication and fills in other numbers', () => {
    const run = episode({ communication: false, workAllowance: 4096, contextLimit: 16384 });
    const prompt = run.systemPrompt(1);
    expect(prompt).toBe(
      [
        INDEPENDENT_EXPLORATION_LINE,
        EXPLORATION_RULES_NO_COMMUNICATION,
        'Your name is agent_21.',
        'Your generation allowance is 4096 tokens; your context window is 16384 tokens, including observations.',
      ].join('\n\n'),
    );
    expect(INDEPENDENT_EXPLORATION_LINE).toBe('You explore independently. No messaging or shared notes are available.');
    for (const phrase of ['partner', 'or messages', 'agent_8', 'collaboration']) expect(prompt).not.toContain(phrase);
    expect(run.teammates(1)).toEqual([]);
  });
});
