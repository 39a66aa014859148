// The scripted explorer of Appendix L: depth-first search over its own observations, in its own
// random door order. Its state comes only from what it saw (move/look outputs) and the messages it
// read; it never sees the tree. With messaging on it reads whenever notified, announces the branch
// it takes at a junction, reports a branch once every onward door below it has been checked, skips
// branches teammates reported exhausted, and backs out of a branch a teammate reports exhausted while
// it is inside. Without messaging it runs the same search silently (the solo demonstrations). Every
// message is a broadcast.
//
// "Prefers branches no teammate claimed" is applied to the whole search: a branch a teammate claimed
// is left for later (the way to it is marked deferred) when the explorer knows of unclaimed work on
// the way back to the start, and it backs up to that work; otherwise it helps with a claimed branch
// where it stands. Back at the start with no unclaimed work left, it helps with claimed and deferred
// branches everywhere. When two explorers claim the same branch, the one whose name sorts first keeps
// it (both can tell from the claims they read); the other, if still in the branch's first corridor,
// goes back for a free branch ("agent_1 claimed R1203 through R4410 first; ...").
//
// Ours, beyond Appendix L: branches at the last junction level (single corridors to dead ends,
// recognized from the depth of a dead end already seen) are neither claimed nor reported, since the
// claim of the enclosing branch already keeps teammates out and the messages would cost more tokens
// than the duplicate search they prevent.

import type { Rng } from '../../common/random.js';
import type { ContextItem, PromptItem } from '../../policy/context-item.js';
import type { ScriptedAction } from '../../policy/scripted/scripted-action.js';
import type { Script, ScriptedAgent, ScriptStartOptions } from '../../policy/scripted/scripted-policy.js';
import { branchKey, claimText, readExplorerNews, reportText, type BranchName } from './demonstrator-messages.js';

interface Observation {
  readonly room: string;
  readonly doors: readonly string[];
  readonly exit: boolean;
  readonly arrivedFrom: string | null;
}

interface RoomState {
  readonly doors: readonly string[];
  /** The room first arrived from: the way back toward the start (null for the start). */
  readonly parent: string | null;
  /** Onward doors in this explorer's own random order. */
  readonly onward: readonly string[];
}

interface Retreat {
  readonly branch: BranchName;
  /** The teammate whose report (or earlier claim) sends the explorer back. */
  readonly teammate: string;
  /** 'report': the branch is exhausted; 'yield': the teammate claimed it first. */
  readonly reason: 'report' | 'yield';
  steps: number;
}

/** Who marked a door done when the explorer checked it itself. */
const SELF = '';

function parseObservation(text: string): Observation | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const record = value as { room?: unknown; doors?: unknown; exit?: unknown; arrived_from?: unknown } | null;
  if (typeof record !== 'object' || record === null || typeof record.room !== 'string' || !Array.isArray(record.doors)) return null;
  return {
    room: record.room,
    doors: record.doors.filter((door): door is string => typeof door === 'string'),
    exit: record.exit === true,
    arrivedFrom: typeof record.arrived_from === 'string' ? record.arrived_from : null,
  };
}

/** The start room's observation, which the exploration task writes into the first user turn. */
function startObservation(prompt: PromptItem): Observation {
  const at = prompt.user.indexOf('{"room"');
  const observation = at === -1 ? null : parseObservation(prompt.user.slice(at));
  if (observation === null) {
    throw new TypeError(`scripted explorer ${prompt.agentName}: the first user turn holds no room observation`);
  }
  return observation;
}

class Explorer implements ScriptedAgent {
  private readonly rooms = new Map<string, RoomState>();
  private readonly path: string[] = [];
  /** Door key (room>door) → who found everything beyond it checked (SELF, or the teammate who reported it). */
  private readonly done = new Map<string, string>();
  /** Door keys left before everything past them was checked (teammates claimed what remained). */
  private readonly deferred = new Set<string>();
  /** Branch key → every explorer that claimed it, this one included. */
  private readonly claimants = new Map<string, Set<string>>();
  private readonly reportsToSend: Array<{ branch: BranchName; reliedOnReports: boolean }> = [];
  private retreat: Retreat | null = null;
  /** Moves from the start to a dead end, and from the last junction to it, once one dead end was seen. */
  private deadEnd: { readonly depth: number; readonly corridor: number } | null = null;
  /** Set once no unclaimed work is left: claimed branches are searched too. */
  private helping = false;
  private unread = 0;

  constructor(
    private readonly name: string,
    private readonly communication: boolean,
    private readonly rng: Rng,
    start: Observation,
  ) {
    this.arrive(start);
  }

  observe(item: ContextItem): void {
    if (item.kind === 'notification') {
      this.unread = Object.values(item.unreadBySender).reduce((total, count) => total + count, 0);
      return;
    }
    if (item.kind !== 'tool_result' || !item.ok) return;
    if (item.name === 'read_messages') {
      this.unread = 0;
      for (const message of item.messages ?? []) this.hear(message.from, message.text);
    } else if (item.name === 'message') {
      const news = readExplorerNews(String(item.arguments?.text ?? ''));
      if (news?.kind === 'claim') this.claimantsOf(news.branch).add(this.name);
      if (news?.kind === 'report') this.reportsToSend.shift();
    } else if (item.name === 'move' || item.name === 'look') {
      const observation = parseObservation(item.output);
      if (observation !== null) this.arrive(observation);
    }
  }

  decide(): ScriptedAction {
    if (this.communication && this.unread > 0) {
      return { kind: 'call', thought: 'Unread messages; read them.', name: 'read_messages', arguments: {} };
    }
    const report = this.reportsToSend[0];
    if (report !== undefined) {
      return {
        kind: 'call',
        thought: `All checked past ${report.branch.entry}; report it.`,
        name: 'message',
        arguments: { to: 'all', text: reportText(report.branch, report.reliedOnReports) },
      };
    }
    const current = this.current();
    const room = this.rooms.get(current) as RoomState;
    if (this.retreat !== null && room.parent !== null) {
      const { branch, teammate, reason, steps } = this.retreat;
      const thought =
        steps > 0
          ? 'Still backing out.'
          : reason === 'report'
            ? `${teammate} reported ${branch.junction} through ${branch.entry} exhausted. I am inside that branch; backtrack toward its entry.`
            : `${teammate} claimed ${branch.junction} through ${branch.entry} first; go back and take a free branch.`;
      return this.move(room.parent, thought);
    }
    const open = room.onward.filter((door) => !this.done.has(branchKey({ junction: current, entry: door })));
    // Back at the start with no unclaimed work left anywhere: help with claimed and deferred branches.
    // (Setting the flag here is idempotent: asked again, decide returns the same action.)
    if (room.parent === null && !this.helping && open.length > 0 && !open.some((door) => this.isFree(current, door))) this.helping = true;
    const available = this.helping ? open : open.filter((door) => !this.deferred.has(branchKey({ junction: current, entry: door })));
    if (!this.isJunction(room)) {
      if (available.length > 0) return this.move(available[0], 'Corridor: keep going.');
      return this.backtrack(current, room, open.length > 0);
    }
    const free = available.filter((door) => this.isMine({ junction: current, entry: door }));
    const announced = free.find((door) => this.claimants.get(branchKey({ junction: current, entry: door }))?.has(this.name) === true);
    if (announced !== undefined || free.length > 0) return this.takeBranch(current, announced ?? free[0], true);
    // Only claimed branches left here: back up if unclaimed work is known above, else help here.
    if (available.length > 0 && (this.helping || !this.freeWorkAbove())) return this.takeBranch(current, available[0], false);
    return this.backtrack(current, room, open.length > 0);
  }

  private takeBranch(junction: string, entry: string, unclaimed: boolean): ScriptedAction {
    const branch = { junction, entry };
    const claimed = this.claimants.get(branchKey(branch))?.has(this.name) === true;
    if (!this.communication || this.isLastLevel(junction)) return this.move(entry, `Junction ${junction}: take ${entry}.`);
    if (claimed) return this.move(entry, `Enter ${entry} as announced.`);
    const why = unclaimed ? 'unclaimed' : 'claimed, but nothing else is left';
    return { kind: 'call', thought: `Junction ${junction}: take ${entry} (${why}).`, name: 'message', arguments: { to: 'all', text: claimText(branch) } };
  }

  private backtrack(current: string, room: RoomState, deferring: boolean): ScriptedAction {
    if (room.parent === null) {
      return { kind: 'idle', thought: 'Every branch is checked or reported exhausted; nothing is left to explore.', text: 'I have no untried doors left.' };
    }
    const thought = deferring
      ? `Rest past ${current} is claimed; back to ${room.parent}.`
      : room.doors.length === 1
        ? 'Dead end: go back.'
        : 'All checked beyond here: go back.';
    return this.move(room.parent, thought);
  }

  private move(room: string, thought: string): ScriptedAction {
    return { kind: 'call', thought, name: 'move', arguments: { room } };
  }

  private current(): string {
    return this.path[this.path.length - 1];
  }

  private isJunction(room: RoomState): boolean {
    return room.onward.length >= 2;
  }

  /** Unclaimed by teammates, or claimed by this explorer first among the claimants (by name). */
  private isMine(branch: BranchName): boolean {
    const claimants = this.claimants.get(branchKey(branch));
    if (claimants === undefined) return true;
    const others = [...claimants].filter((claimant) => claimant !== this.name);
    return others.length === 0 || (claimants.has(this.name) && others.every((other) => this.name < other));
  }

  private claimantsOf(branch: BranchName): Set<string> {
    const key = branchKey(branch);
    let claimants = this.claimants.get(key);
    if (claimants === undefined) {
      claimants = new Set();
      this.claimants.set(key, claimants);
    }
    return claimants;
  }

  private hear(from: string, text: string): void {
    const news = readExplorerNews(text);
    if (news === null) return;
    const inside = this.path.findIndex((room, index) => room === news.branch.junction && this.path[index + 1] === news.branch.entry);
    if (news.kind === 'claim') {
      this.claimantsOf(news.branch).add(from);
      if (inside !== -1 && this.retreat === null && this.shouldYield(inside)) this.retreat = { branch: news.branch, teammate: from, reason: 'yield', steps: 0 };
      return;
    }
    const key = branchKey(news.branch);
    if (this.done.has(key)) return;
    this.done.set(key, from);
    const outer = this.retreat === null ? -1 : this.path.indexOf(this.retreat.branch.junction);
    if (inside !== -1 && (outer === -1 || inside < outer)) this.retreat = { branch: news.branch, teammate: from, reason: 'report', steps: 0 };
  }

  /**
   * A teammate with priority claimed the branch entered from path[junctionIndex]: go back when the
   * explorer is still in the branch's first corridor (no junction passed since) and the junction has
   * a free door to take instead.
   */
  private shouldYield(junctionIndex: number): boolean {
    const junction = this.path[junctionIndex];
    const entry = this.path[junctionIndex + 1];
    if (this.isMine({ junction, entry })) return false;
    for (let index = junctionIndex + 1; index < this.path.length - 1; index += 1) {
      if (this.isJunction(this.rooms.get(this.path[index]) as RoomState)) return false;
    }
    const room = this.rooms.get(junction) as RoomState;
    return room.onward.some((door) => door !== entry && !this.done.has(branchKey({ junction, entry: door })) && this.isFree(junction, door));
  }

  private arrive(observation: Observation): void {
    const { room } = observation;
    if (!this.rooms.has(room)) {
      const parent = observation.arrivedFrom;
      this.rooms.set(room, { doors: observation.doors, parent, onward: this.rng.shuffle(observation.doors.filter((door) => door !== parent)) });
    }
    if (this.path.length > 0 && room === this.current()) return;
    if (this.path.length >= 2 && room === this.path[this.path.length - 2]) this.leave(this.path.pop() as string, room);
    else this.path.push(room);
    const state = this.rooms.get(room) as RoomState;
    if (this.deadEnd === null && state.parent !== null && state.onward.length === 0) {
      let corridor = 1;
      while (!this.isJunction(this.rooms.get(this.path[this.path.length - 1 - corridor]) as RoomState)) corridor += 1;
      this.deadEnd = { depth: this.path.length - 1, corridor };
    }
    if (this.retreat !== null) {
      this.retreat.steps += 1;
      if (room === this.retreat.branch.junction) this.retreat = null;
    }
  }

  /** Whether a junction on the way back to the start has a free door other than the way down the current path. */
  private freeWorkAbove(): boolean {
    for (let index = this.path.length - 2; index >= 0; index -= 1) {
      const junction = this.path[index];
      const room = this.rooms.get(junction) as RoomState;
      const down = this.path[index + 1];
      if (room.onward.some((door) => door !== down && !this.done.has(branchKey({ junction, entry: door })) && this.isFree(junction, door))) return true;
    }
    return false;
  }

  /**
   * Whether the junction's branches are single corridors to dead ends, as learned from a dead end
   * seen before (all dead ends lie at the same depth). Such small branches are neither claimed nor
   * reported: the claim of the branch holding the junction already keeps teammates out.
   */
  private isLastLevel(junction: string): boolean {
    return this.deadEnd !== null && this.path.indexOf(junction) + this.deadEnd.corridor === this.deadEnd.depth;
  }

  /** Neither deferred nor claimed by a teammate first. */
  private isFree(junction: string, door: string): boolean {
    return !this.deferred.has(branchKey({ junction, entry: door })) && this.isMine({ junction, entry: door });
  }

  /** Backtracked from `child` to `parentRoom`: when everything past the child is checked, its door is done. */
  private leave(child: string, parentRoom: string): void {
    if (this.retreat !== null) return;
    const childRoom = this.rooms.get(child) as RoomState;
    const complete = childRoom.onward.every((door) => this.done.has(branchKey({ junction: child, entry: door })));
    const branch = { junction: parentRoom, entry: child };
    const key = branchKey(branch);
    if (!complete) {
      this.deferred.add(key);
      return;
    }
    this.deferred.delete(key);
    if (this.done.has(key)) return;
    this.done.set(key, SELF);
    if (this.communication && this.isJunction(this.rooms.get(parentRoom) as RoomState) && !this.isLastLevel(parentRoom)) {
      this.reportsToSend.push({ branch, reliedOnReports: this.reliedOnReports(child) });
    }
  }

  /** Whether a teammate's report let this explorer skip part of the branch entered at `entry`. */
  private reliedOnReports(entry: string): boolean {
    for (const [key, reporter] of this.done) {
      if (reporter === SELF) continue;
      for (let room: string | null = key.slice(0, key.indexOf('>')); room !== null; room = this.rooms.get(room)?.parent ?? null) {
        if (room === entry) return true;
      }
    }
    return false;
  }
}

/** The Appendix L explorer; messaging follows the prompt (the messaging tools present or not). */
export const explorerScript: Script = {
  name: 'explorer',
  start(options: ScriptStartOptions): ScriptedAgent {
    const { prompt, rng } = options;
    return new Explorer(prompt.agentName, prompt.communication && prompt.toolNames.includes('message'), rng, startObservation(prompt));
  },
};
