// The error raised when a chat rendering is asked for something the format cannot express.

import { SwarmError } from '../../errors.js';

/** A value that cannot be rendered into Qwen3's chat format (for example a NaN in a tool output). */
export class ChatFormatError extends SwarmError {}
