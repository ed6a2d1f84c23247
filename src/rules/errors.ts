/**
 * A protocol error carries the OAuth error code the spec's tables name and a description a developer
 * can act on (D4). It never carries secrets or attribute values.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_scope'
  | 'invalid_grant'
  | 'invalid_client'
  | 'invalid_token'
  | 'unauthorised_client'
  | 'unsupported_response_type'
  | 'unsupported_grant_type'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable';

export class ProtocolError extends Error {
  readonly error: ErrorCode;
  readonly status: number;

  constructor(error: ErrorCode, description: string, status = 400) {
    super(description);
    this.name = 'ProtocolError';
    this.error = error;
    this.status = status;
  }

  get description(): string {
    return this.message;
  }

  toJSON(): { error: ErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidRequest = (d: string) => new ProtocolError('invalid_request', d);
export const invalidScope = (d: string) => new ProtocolError('invalid_scope', d);
