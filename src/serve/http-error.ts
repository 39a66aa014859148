// The errors `swarm serve` answers with: an HTTP status and an OpenAI-style body
// {"error": {"message", "type", "param", "code"}}, as OpenAI's API, vLLM and SGLang send them, so
// clients (the official `openai` package included) raise them with the message intact.

/** A request the server refuses; the message says which field and what was expected. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field at fault, or null. */
    readonly param: string | null = null,
    /** A machine-readable reason, e.g. "context_length_exceeded"; null for none. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'HttpError';
  }

  /** OpenAI's error type for the status. */
  get type(): string {
    if (this.status === 429) return 'rate_limit_error';
    if (this.status === 404) return 'not_found_error';
    if (this.status >= 500) return 'server_error';
    return 'invalid_request_error';
  }

  /** The JSON body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A 400 naming the field. */
export function badRequest(param: string, message: string, code: string | null = null): HttpError {
  return new HttpError(400, message, param, code);
}
