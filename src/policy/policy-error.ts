// The error raised when a policy breaks its contract (more tokens than asked, log-probs that do not
// match the tokens, a 'stop' without a stop token). This is an infrastructure failure, never
// something a model wrote: the harness fails the episode so the group can be recollected (SPEC §6).

import { SwarmError } from '../errors.js';

/** A policy returned a result the harness cannot use. */
export class PolicyError extends SwarmError {}
