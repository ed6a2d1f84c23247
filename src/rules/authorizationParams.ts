import { invalidRequest, ProtocolError } from './errors.js';
import { isAbsent } from './text.js';

/** spec Errors: ResponseType "Not provided" -> invalid_request; "Not code" -> unsupported_response_type. */
export function checkResponseType(v: unknown): void {
  if (isAbsent(v)) throw invalidRequest('response_type is required');
  // spec Endpoints: response_type must be `code` (authorization code flow only)
  if (v !== 'code') throw new ProtocolError('unsupported_response_type', 'response_type must be code');
}

/** spec Errors: ResponseMode "Not query" -> invalid_request; optional (spec PAR: "If provided"). */
export function checkResponseMode(v: unknown): void {
  if (v === undefined) return;
  if (v !== 'query') throw invalidRequest('response_mode must be query');
}

/** spec Authentication 3: redirect_uri must exactly match a registered one (Errors: RedirectUri -> invalid_request). */
export function checkRedirectUri(v: unknown, registered: readonly string[]): string {
  if (isAbsent(v)) throw invalidRequest('redirect_uri is required');
  // spec Authentication 3: exact string match, no normalisation
  if (typeof v !== 'string' || !registered.includes(v))
    throw invalidRequest('redirect_uri is not registered for this client');
  return v;
}

/** spec Endpoints: nonce is echoed into the ID token; required for non-PAR authorise. */
export function checkNonce(v: unknown, required: boolean, maxLength: number): string | undefined {
  if (isAbsent(v)) {
    if (required) throw invalidRequest('nonce is required');
    return undefined;
  }
  if (typeof v !== 'string') throw invalidRequest('nonce must be a string');
  // Limits: bound what is stored and echoed into the ID token
  if (v.length > maxLength) throw invalidRequest(`nonce must be at most ${maxLength} characters`);
  return v;
}

/**
 * spec Endpoints: state is returned on the redirect (and kept with the request until then); optional,
 * except in External Client flows, where it links the webhook calls to the request (spec: PAR field state).
 */
export function checkState(v: unknown, maxLength: number, required = false): void {
  if (required && isAbsent(v))
    throw invalidRequest('state is required for External Client flows (scope External): the webhook carries it back');
  // Limits: bound what is stored and sent back
  if (typeof v === 'string' && v.length > maxLength)
    throw invalidRequest(`state must be at most ${maxLength} characters`);
}
