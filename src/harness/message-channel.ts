// Message ablations (`swarm eval --messages`): the channel between a sender's message call and its
// recipients' inboxes, perturbed to measure how much of a team's success rides on what it says.
//   none        every message reaches whom it was addressed to, at once (the protocol).
//   drop        no message reaches anyone.
//   shuffle     each message reaches as many teammates as it was addressed to, drawn at random
//               (never the sender) from the episode's own seed.
//   delay:K     a message reaches its recipients once the team has finished K more generation
//               pieces (any agent's); when every agent waits, the next due messages arrive at once,
//               so a delay never ends an episode by itself.
//   truncate:T  recipients read the first T tokens of the text (the policy's tokenizer).
// The sender's tool output never changes: it cannot tell. Trace `message` events record who it
// reached (`recipients`) and, where the channel changed something, `addressed`, `deliveredText` or
// `delayPieces` (docs/trace-format.md).
import type { Rng } from '../common/random.js';
import { ConfigError } from '../errors.js';

/** A perturbation of the message channel. */
export type MessagePerturbation =
  | { readonly kind: 'none' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'shuffle' }
  | { readonly kind: 'delay'; readonly pieces: number }
  | { readonly kind: 'truncate'; readonly tokens: number };

/** The protocol's channel. */
export const NO_PERTURBATION: MessagePerturbation = { kind: 'none' };

/** What --messages accepts, in words. */
export const MESSAGE_PERTURBATION_HELP = 'none | drop | shuffle | delay:K (K ≥ 1 pieces) | truncate:T (T ≥ 0 tokens)';

/** Parses none, drop, shuffle, delay:K or truncate:T; a ConfigError names what was expected. */
export function parseMessagePerturbation(text: string, what = '--messages'): MessagePerturbation {
  const [kind, argument, ...rest] = text.split(':');
  const count = (min: number): number => {
    const value = Number(argument);
    if (argument === undefined || rest.length > 0 || !/^\d+$/.test(argument) || !Number.isSafeInteger(value) || value < min) {
      throw new ConfigError(`${what}: ${JSON.stringify(text)} needs an integer ≥ ${min} after "${kind}:"; expected ${MESSAGE_PERTURBATION_HELP}.`);
    }
    return value;
  };
  if ((kind === 'none' || kind === 'drop' || kind === 'shuffle') && argument === undefined) return { kind };
  if (kind === 'delay') return { kind, pieces: count(1) };
  if (kind === 'truncate') return { kind, tokens: count(0) };
  throw new ConfigError(`${what}: ${JSON.stringify(text)} is not a message perturbation; expected ${MESSAGE_PERTURBATION_HELP}.`);
}

/** The perturbation as --messages writes it. */
export function formatMessagePerturbation(perturbation: MessagePerturbation): string {
  switch (perturbation.kind) {
    case 'delay':
      return `delay:${perturbation.pieces}`;
    case 'truncate':
      return `truncate:${perturbation.tokens}`;
    default:
      return perturbation.kind;
  }
}

/** What the channel does with one message. */
export interface ChannelDecision {
  /** Who it reaches. */
  readonly recipients: readonly string[];
  /** The text they read. */
  readonly text: string;
  /** Team pieces to wait before it arrives (0: at once). */
  readonly delayPieces: number;
}

/** The channel of one episode. */
export class MessageChannel {
  constructor(
    private readonly perturbation: MessagePerturbation,
    /** Draws the shuffled recipients (the episode's own stream). */
    private readonly rng: Rng,
    /** The first `tokens` tokens of a text, decoded (the policy's tokenizer). */
    private readonly truncate: (text: string, tokens: number) => string,
  ) {}

  /** Whether messages pass unchanged. */
  get intact(): boolean {
    return this.perturbation.kind === 'none';
  }

  /** Decides where a message from `sender` addressed to `addressed` goes, among the sender's `teammates`. */
  route(sender: string, addressed: readonly string[], teammates: readonly string[], text: string): ChannelDecision {
    const p = this.perturbation;
    switch (p.kind) {
      case 'none':
        return { recipients: addressed, text, delayPieces: 0 };
      case 'drop':
        return { recipients: [], text, delayPieces: 0 };
      case 'shuffle': {
        // A random subset of the same size, listed in the teammates' order (a broadcast stays a broadcast).
        const others = teammates.filter((name) => name !== sender);
        const chosen = new Set(this.rng.shuffle(others).slice(0, addressed.length));
        return { recipients: others.filter((name) => chosen.has(name)), text, delayPieces: 0 };
      }
      case 'delay':
        return { recipients: addressed, text, delayPieces: p.pieces };
      case 'truncate':
        return { recipients: addressed, text: this.truncate(text, p.tokens), delayPieces: 0 };
    }
  }
}
