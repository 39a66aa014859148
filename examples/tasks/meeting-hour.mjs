// meeting-hour: a small cooperative task written as a user's task module, the worked example of
// docs/tasks.md. Each of N agents knows only its own free hours between 9 and 17; exactly one hour
// suits every agent of the team, and the team succeeds when some agent names it. No agent can find it
// alone, so the team must talk. It is ours (not the paper's); load it with
//   swarm run --task ./examples/tasks/meeting-hour.mjs --n 4
//   swarm eval --policy scripted --task ./examples/tasks/meeting-hour.mjs --sizes 2,4 --seeds 2 --out DIR
//   swarm train --set task=./examples/tasks/meeting-hour.mjs
// It imports only the package's public surface (src/index.ts).
import { createRng, createRoster, toolError } from 's3-swarm';

const FIRST_HOUR = 9;
const LAST_HOUR = 17;
const HOURS = Array.from({ length: LAST_HOUR - FIRST_HOUR + 1 }, (_, i) => FIRST_HOUR + i);
/** Free hours each agent has besides the shared one. */
const EXTRA_HOURS = 3;
/** The largest team a problem has calendars for (the evaluation protocol goes to 16). */
const MAX_AGENTS = 16;
const SPLIT_SIZES = { train: 256, dev: 32, eval: 32 };

/**
 * One problem: the shared hour and one calendar per agent. The first two calendars share nothing but
 * the shared hour, so for every team of two or more it is the only hour that suits everyone.
 */
function generateProblem(split, index) {
  const rng = createRng(`meeting-hour/${split}/${index}`);
  const shared = HOURS[rng.nextInt(HOURS.length)];
  const others = rng.shuffle(HOURS.filter((hour) => hour !== shared));
  const calendars = [others.slice(0, EXTRA_HOURS), others.slice(EXTRA_HOURS, 2 * EXTRA_HOURS)];
  for (let agent = 2; agent < MAX_AGENTS; agent += 1) calendars.push(rng.fork(`agent/${agent}`).shuffle(others).slice(0, EXTRA_HOURS));
  return {
    id: `meeting-hour/${split}/${String(index).padStart(4, '0')}`,
    calendars: calendars.map((extra) => [shared, ...extra].sort((a, b) => a - b)),
  };
}

/** The hours every calendar of the team holds. */
function commonHours(calendars) {
  return calendars.reduce((common, calendar) => common.filter((hour) => calendar.includes(hour)));
}

/** The hour a final answer names ("#### 14"), or null. */
function answeredHour(text) {
  const line = text.split('\n').reverse().find((l) => l.trimStart().startsWith('####'));
  const match = line === undefined ? null : /^\s*####\s*(\d{1,2})\s*$/.exec(line);
  return match === null ? null : Number(match[1]);
}

function createEpisode(options) {
  const { problem, communication } = options;
  const roster = createRoster(options);
  const n = roster.agentCount;
  if (n > problem.calendars.length) throw new Error(`meeting-hour: problem ${problem.id} has calendars for ${problem.calendars.length} agents, not ${n}`);
  const calendars = problem.calendars.slice(0, n);
  const suits = commonHours(calendars);
  const correct = new Array(n).fill(false);
  return {
    agentCount: n,
    agentNames: roster.agentNames,
    teammates: (i) => roster.teammates(i),
    systemPrompt: (i) =>
      `${roster.introduction(i)} The ${n === 1 ? 'meeting is yours alone' : `${n} of you are planning a one-hour meeting`}, ` +
      `to start on the hour between ${FIRST_HOUR} and ${LAST_HOUR}. Each of you knows only your own free hours; ` +
      `exactly one hour suits everyone.${communication && n > 1 ? ' Share your free hours and read your teammates\'.' : ''} ` +
      'When you know the hour, or when asked, answer with one line "#### H" (for example "#### 14").',
    firstUserMessage: (i) => {
      roster.checkAgent(i);
      return `Your free hours: ${calendars[i].join(', ')}.`;
    },
    toolSpecs: () => [],
    callTool: (request) => toolError(`unknown tool ${JSON.stringify(request.name) ?? String(request.name)}; this task has no tools besides messaging`),
    finalPrompt: () => 'The planning time is over. Which hour suits everyone? Answer with one line "#### H".',
    gradeAnswer: ({ agentIndex, text }) => {
      roster.checkAgent(agentIndex);
      const hour = typeof text === 'string' ? answeredHour(text) : null;
      correct[agentIndex] = hour !== null && suits.includes(hour);
      return correct[agentIndex];
    },
    agentSucceeded: (i) => correct[i],
    teamSucceeded: () => correct.some(Boolean),
  };
}

const OWN_HOURS = /Your free hours: ([\d, ]+)\./;
const STATED_HOURS = /free hours: ([\d, ]+)/i;
const hoursIn = (text) => text.split(',').map((part) => Number(part.trim())).filter(Number.isInteger);

/** The scripted planner: broadcasts its free hours, reads when notified, answers once it has heard everyone. */
const plannerScript = {
  name: 'meeting-planner',
  start({ prompt }) {
    const own = OWN_HOURS.exec(prompt.user);
    if (own === null) throw new TypeError(`meeting-planner ${prompt.agentName}: the first user turn states no free hours`);
    const state = {
      own: hoursIn(own[1]),
      heard: new Map(),
      sent: false,
      unread: 0,
      asked: false,
      communication: prompt.communication && prompt.toolNames.includes('message'),
      teammates: prompt.teammates.length,
    };
    const answer = (thought) => {
      const common = commonHours([state.own, ...state.heard.values()]);
      return { kind: 'answer', thought: `${thought} Common: ${common.join(', ')}.`, answer: String(common[0] ?? state.own[0]) };
    };
    return {
      observe(item) {
        if (item.kind === 'final_prompt') state.asked = true;
        if (item.kind === 'notification') state.unread = Object.values(item.unreadBySender).reduce((a, b) => a + b, 0);
        if (item.kind !== 'tool_result' || !item.ok) return;
        if (item.name === 'message') state.sent = true;
        if (item.name === 'read_messages') {
          state.unread = 0;
          for (const message of item.messages ?? []) {
            const stated = STATED_HOURS.exec(message.text);
            if (stated !== null && !state.heard.has(message.from)) state.heard.set(message.from, hoursIn(stated[1]));
          }
        }
      },
      decide() {
        if (state.asked) return answer(`Asked; I know ${state.heard.size + 1} calendars.`);
        if (!state.communication) return { kind: 'idle', thought: 'No messaging: I know only my own hours.', text: 'Waiting to be asked.' };
        if (!state.sent) return { kind: 'call', thought: 'Share my hours.', name: 'message', arguments: { to: 'all', text: `My free hours: ${state.own.join(', ')}.` } };
        if (state.heard.size >= state.teammates) return answer('I have every calendar.');
        if (state.unread > 0) return { kind: 'call', thought: 'Read the new messages.', name: 'read_messages', arguments: {} };
        return { kind: 'idle', thought: `Heard ${state.heard.size} of ${state.teammates}; wait.`, text: 'Waiting for my teammates.' };
      },
    };
  },
};

/** The whole numbers a text states (digits only), as a set. */
const numbersIn = (text) => new Set((text.match(/\d+/g) ?? []).map(Number));

/**
 * The task's own metrics (Task.metrics), measured by `swarm eval` on every episode's EpisodeView and
 * reported per team size beside the task-independent ones.
 */
const metrics = [
  {
    name: 'agentAccuracy',
    label: 'Agents naming the hour',
    range: 'fraction',
    percent: true,
    measure: (episode) => episode.agentSuccess.filter(Boolean).length / episode.agentSuccess.length,
  },
  {
    name: 'calendarsSharedShare',
    label: 'Calendars shared',
    range: 'fraction',
    messagingOnly: true,
    // Share of agents who sent some message stating every one of their free hours; undefined alone.
    measure: (episode, problem) => {
      const n = episode.agentNames.length;
      if (n < 2) return null;
      const shared = episode.agentNames.filter((name, i) =>
        episode.messages.some((message) => message.from === name && problem.calendars[i].every((hour) => numbersIn(message.text).has(hour))),
      );
      return shared.length / n;
    },
  },
  {
    name: 'heardEveryoneShare',
    label: 'Heard every teammate',
    range: 'fraction',
    messagingOnly: true,
    // Share of agents who read at least one message from each of their teammates; undefined alone.
    measure: (episode) => {
      const n = episode.agentNames.length;
      if (n < 2) return null;
      const heard = episode.agentNames.filter((name) =>
        episode.agentNames.every((other) => other === name || episode.messages.some((m) => m.from === other && m.reads.some((read) => read.agent === name))),
      );
      return heard.length / n;
    },
  },
];

/** The task. */
export default {
  name: 'meeting-hour',
  title: 'Meeting hour (example task)',
  // Ours: calendars are short, so small allowances suffice; evaluation samples at 1.0 as for aggregation.
  defaults: { workAllowance: 1024, finalAllowance: 64, contextLimit: 8192, evaluationTemperature: 1.0 },
  metrics,
  demonstrator: { script: plannerScript, description: 'scripted planners: broadcast their free hours once, answer the common hour when every teammate is heard' },
  async loadProblems({ split }) {
    if (!(split in SPLIT_SIZES)) throw new Error(`meeting-hour: unknown split ${JSON.stringify(split)}`);
    return Array.from({ length: SPLIT_SIZES[split] }, (_, index) => generateProblem(split, index));
  },
  createEpisode,
};
