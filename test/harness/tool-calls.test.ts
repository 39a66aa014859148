// Everything a model can get wrong in a tool call becomes a tool output it reads, and the episode goes
// on: malformed JSON, unknown tools, missing and extra arguments, wrong types, nonexistent teammates,
// messages to oneself, moves to rooms that are not doors. With communication off the messaging tools
// do not exist. Also the exact context an agent starts from and the roles of its tokens.

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { runEpisode, type EpisodeResult, type ToolCallEvent } from '../../src/harness/index.js';
import { renderPrompt } from '../../src/model/chat/index.js';
import { PolicyError, type GenerateOptions, type GenerateResult } from '../../src/policy/index.js';
import { aggregationTask, createRng, explorationTask, generateTree, harnessRules, MESSAGE_TOOLS, type AggregationProblem } from '../../src/tasks/index.js';
import { call, IDLE, piece, qwen3Tokenizer, TextPolicy } from './helpers.js';

const tokenizer = qwen3Tokenizer();
const problem: AggregationProblem = { id: 'agg/tools', numbers: [42, 7, 42, 99] };
const tree = generateTree({ depth: 1, rng: createRng('tools-tree') });

/** Agent 0 writes `script[k]` as its k-th response; everyone else idles. */
async function scripted(script: string[], options: { communication?: boolean; exploration?: boolean } = {}): Promise<EpisodeResult> {
  const policy = new TextPolicy(tokenizer, (sequence) => (sequence.agentIndex === 0 ? (script[sequence.pieces.length] ?? IDLE) : IDLE));
  const task = options.exploration === true ? explorationTask : aggregationTask;
  const taskProblem = options.exploration === true ? { id: 'tree/tools', tree } : problem;
  return runEpisode({ task, problem: taskProblem, n: 3, policy, seed: 21, communication: options.communication ?? true });
}

function errors(result: EpisodeResult): string[] {
  return result.trace
    .filter((event): event is ToolCallEvent => event.type === 'tool_call')
    .map((event) => (event.ok ? 'ok' : (JSON.parse(event.output) as { error: string }).error));
}

describe('tool-call errors are outputs the agent reads', () => {
  it('reports malformed JSON, unknown tools and bad arguments, and keeps going', async () => {
    const result = await scripted([
      '<tool_call>\n{"name": "message", "arguments": {"to": "all"\n</tool_call>',
      call('fly'),
      call('message', { to: 'all' }),
      call('message', { to: 'all', text: 'x', cc: 'y' }),
      call('message', { to: 3, text: 'x' }),
      call('read_messages'),
    ]);
    const messages = errors(result);
    expect(messages[0]).toMatch(/^invalid JSON in tool call/);
    expect(messages.slice(1)).toEqual([
      'unknown tool "fly"; available tools: message, read_messages, check_notifications',
      'tool "message" is missing required argument "text"; its arguments are: to, text',
      'tool "message" has no argument "cc"; its arguments are: to, text',
      'argument "to" of tool "message" must be a string, got the integer 3',
      'ok',
    ]);
    const outputs = result.agents[0].sequence.context.filter((item) => item.kind === 'tool_result');
    expect(outputs).toHaveLength(6);
  });

  it('rejects a message to oneself and to a teammate that does not exist', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) => {
      const prompt = sequence.context[0];
      if (sequence.agentIndex !== 0 || prompt.kind !== 'prompt') return IDLE;
      return [call('message', { to: prompt.agentName, text: 'me' }), call('message', { to: 'agent_99', text: 'who' })][sequence.pieces.length] ?? IDLE;
    });
    const result = await runEpisode({ task: aggregationTask, problem, n: 3, policy, seed: 22 });
    const teammates = result.trace[0].type === 'episode_start' ? result.trace[0].teammates[0] : [];
    expect(errors(result)).toEqual([
      `you cannot message yourself; send to a teammate (${teammates.join(', ')}) or all`,
      `no teammate named "agent_99"; your teammates are ${teammates.join(', ')}, or use all`,
    ]);
    expect(result.trace.some((event) => event.type === 'message')).toBe(false);
  });

  it('rejects a move into a room that is not a door of the current room', async () => {
    const result = await scripted([call('move', { room: 'R0000' }), call('look')], { exploration: true });
    expect(errors(result)[0]).toMatch(/^'R0000' is not a door of your current room R\d+\. Doors: /);
    expect(errors(result)[1]).toBe('ok');
  });

  it('answers a stop at a tool call written inside reasoning with an error', async () => {
    const result = await scripted(['<think>\n<tool_call>\n{"name": "read_messages", "arguments": {}}\n</tool_call>']);
    expect(errors(result)).toEqual(['tool call inside your reasoning (the think block) was not executed; end your reasoning before calling a tool']);
  });

  it('delivers a broadcast to all N − 1 teammates and reports them', async () => {
    const result = await scripted([call('message', { to: 'all', text: 'hello team' })]);
    const message = result.trace.find((event) => event.type === 'message');
    expect(message?.type === 'message' && message.recipients).toHaveLength(2);
    expect(result.trace.find((event) => event.type === 'tool_call')).toMatchObject({ ok: true, output: `{"delivered_to": ["${message?.type === 'message' ? message.recipients.join('", "') : ''}"]}` });
  });

  it('never shows message contents in notifications, only counts', async () => {
    const result = await scripted([call('message', { to: 'all', text: 'SECRET-CONTENT' })]);
    for (const agent of result.agents.slice(1)) {
      const notifications = agent.sequence.context.filter((item) => item.kind === 'notification');
      expect(notifications.length).toBeGreaterThan(0);
      expect(JSON.stringify(notifications)).not.toContain('SECRET');
    }
  });
});

describe('communication off', () => {
  it('removes the messaging tools: a message call is an unknown tool', async () => {
    const result = await scripted([call('message', { to: 'all', text: 'x' })], { communication: false });
    expect(errors(result)).toEqual(['unknown tool "message"; available tools: (none)']);
    const prompt = result.agents[0].sequence.context[0];
    expect(prompt.kind === 'prompt' && prompt.toolNames).toEqual([]);
    expect(prompt.kind === 'prompt' && prompt.teammates).toEqual([]);
  });

  it('lists only the task tools for exploration', async () => {
    const result = await scripted([], { communication: false, exploration: true });
    const prompt = result.agents[0].sequence.context[0];
    expect(prompt.kind === 'prompt' && prompt.toolNames).toEqual(['move', 'look']);
  });
});

describe('the opening context', () => {
  it('is the rendered prompt, tokenized exactly, with role prompt and NaN log-probs', async () => {
    const result = await scripted([]);
    const sequence = result.agents[0].sequence;
    const prompt = sequence.context[0];
    if (prompt.kind !== 'prompt') throw new Error('expected a prompt item');
    const episode = aggregationTask.createEpisode({ problem, agentNames: result.agents.map((agent) => agent.name), communication: true, rng: createRng(21).fork('episode'), workAllowance: 8192, contextLimit: 40_960, tokenCostWeight: 0.25 });
    expect(prompt.system).toBe(`${episode.systemPrompt(0)}\n\n${harnessRules({ communication: true })}`);
    expect(prompt.user).toBe(episode.firstUserMessage(0));
    const expected = tokenizer.encode(renderPrompt({ system: prompt.system, tools: MESSAGE_TOOLS, user: prompt.user }));
    expect([...sequence.tokens(0, expected.length)]).toEqual(expected);
    expect(new Set(sequence.roles(0, expected.length))).toEqual(new Set([0]));
    expect(sequence.logprobs(0, expected.length).every(Number.isNaN)).toBe(true);
  });

  it('records each piece with its policy version and sampler log-probs', async () => {
    const result = await scripted([call('read_messages')]);
    const sequence = result.agents[0].sequence;
    expect(sequence.pieces.length).toBeGreaterThan(0);
    for (const record of sequence.pieces) {
      expect(record.policyVersion).toBe(3);
      for (let i = record.start; i < record.end; i += 1) expect(sequence.roleAt(i)).toBe('sampled');
      expect([...sequence.logprobs(record.start, record.end)].every((value) => value === -0.5)).toBe(true);
    }
  });

  it('marks a received message’s text inside a read_messages output with role message', async () => {
    const policy = new TextPolicy(tokenizer, (sequence) =>
      sequence.agentIndex === 0
        ? [call('message', { to: 'all', text: 'Mine is forty-two (42).' })][sequence.pieces.length] ?? IDLE
        : sequence.context.some((item) => item.kind === 'notification') && sequence.pieces.length < 3
          ? call('read_messages')
          : IDLE,
    );
    const result = await runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 23 });
    const sequence = result.agents[1].sequence;
    const roles = sequence.roles();
    const messageTokens = [...sequence.tokens()].filter((_, index) => roles[index] === 4);
    // The message's JSON string literal; a token straddling its edge (here '."}') takes the message role.
    expect(tokenizer.decode(messageTokens)).toBe(' "Mine is forty-two (42)."}');
  });
});

describe('names and settings', () => {
  it('samples distinct names from agent_1..agent_64 and gives each agent its own teammate order', async () => {
    const result = await runEpisode({ task: aggregationTask, problem: { id: 'p16', numbers: Array.from({ length: 16 }, (_, i) => i + 1) }, n: 16, policy: new TextPolicy(tokenizer, () => IDLE), seed: 24 });
    const start = result.trace[0];
    if (start.type !== 'episode_start') throw new Error('no episode_start');
    expect(new Set(start.agentNames).size).toBe(16);
    for (const name of start.agentNames) expect(name).toMatch(/^agent_([1-9]|[1-5]\d|6[0-4])$/);
    start.teammates.forEach((list, index) => expect([...list].sort()).toEqual(start.agentNames.filter((_, other) => other !== index).sort()));
    expect(new Set(start.teammates.map((list) => list.join())).size).toBeGreaterThan(1);
  });

  it('refuses a team larger than the name pool and a piece size above 1,024', async () => {
    const policy = new TextPolicy(tokenizer, () => IDLE);
    await expect(runEpisode({ task: aggregationTask, problem, n: 65, policy, seed: 1 })).rejects.toThrow(ConfigError);
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 1, generationPieceTokens: 2048 })).rejects.toThrow(/generationPieceTokens/);
  });

  it('refuses a context too small for the prompt', async () => {
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy: new TextPolicy(tokenizer, () => IDLE), seed: 1, contextLimit: 1500 })).rejects.toThrow(/raise contextLimit/);
  });
});

describe('failures that are not the model’s', () => {
  const broken = (result: Partial<GenerateResult>) => ({
    tokenizer,
    generate: () => Promise.resolve({ tokens: [1, 2], logprobs: [0, 0], finish: 'length', ...result } as GenerateResult),
  });

  it('rejects the episode when a policy returns more tokens than asked', async () => {
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy: broken({ tokens: new Array(2000).fill(1), logprobs: new Array(2000).fill(0) }), seed: 1 })).rejects.toThrow(PolicyError);
  });

  it('rejects the episode when log-probs do not match the tokens', async () => {
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy: broken({ logprobs: [0] }), seed: 1 })).rejects.toThrow(/log-probs/);
  });

  it('rejects the episode when a stop has no stop token', async () => {
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy: broken({ finish: 'stop' }), seed: 1 })).rejects.toThrow(/stop token/);
  });

  it('rejects with the abort reason when the caller aborts', async () => {
    const controller = new AbortController();
    const policy = {
      tokenizer,
      generate: (_: unknown, options: GenerateOptions) => {
        controller.abort(new Error('stop now'));
        return Promise.resolve(piece(tokenizer, IDLE, options));
      },
    };
    await expect(runEpisode({ task: aggregationTask, problem, n: 2, policy, seed: 1, signal: controller.signal })).rejects.toThrow('stop now');
  });
});
