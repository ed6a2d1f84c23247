import { createHash } from 'node:crypto';
import { invalidRequest } from './errors.js';
import { isAbsent, shown } from './text.js';

export type PkceMethod = 'S256' | 'plain';

const KNOWN_METHODS: readonly string[] = ['S256', 'plain'];
/** RFC 7636 4.1/4.2: plain challenge = code verifier: 43-128 unreserved characters. */
const PLAIN_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** RFC 7636 4.2: S256 challenge = BASE64URL(SHA256(verifier)), 32 bytes = 43 characters, no padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Checks PKCE request parameters (spec Authentication 5; Errors: code_challenge_method / code_challenge;
 * D5) and returns the S256 form oidc-provider understands: a `plain` challenge is translated into its
 * S256 equivalent at the edge (D5), so one code path verifies both.
 */
export function checkPkce(
  params: { code_challenge?: unknown; code_challenge_method?: unknown },
  policy: { required: boolean; methods: readonly PkceMethod[] },
): { code_challenge: string; code_challenge_method: 'S256' } | undefined {
  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  const supported = `supported: ${policy.methods.join(', ')}`;

  if (isAbsent(challenge)) {
    // spec Errors (Version 2): code_challenge "PKCE required and challenge not provided" -> invalid_request
    if (policy.required) throw invalidRequest('code_challenge is required: the client is configured for PKCE');
    // RFC 7636 4.3: a method without a challenge is meaningless
    if (!isAbsent(method)) throw invalidRequest('code_challenge is required when code_challenge_method is sent');
    return undefined;
  }
  // spec Authentication 5 / D5: the method is required with a challenge (no implicit plain default)
  if (isAbsent(method)) throw invalidRequest(`code_challenge_method is required (${supported})`);
  // spec Errors (Version 2): code_challenge_method "method not supported" -> invalid_request
  if (typeof method !== 'string' || !KNOWN_METHODS.includes(method) || !policy.methods.includes(method as PkceMethod)) {
    const what = typeof method === 'string' ? ` ${shown(method, 16)}` : '';
    throw invalidRequest(`code_challenge_method${what} is not supported (${supported})`);
  }
  if (typeof challenge !== 'string') throw invalidRequest('code_challenge must be a string');

  if (method === 'plain') {
    // RFC 7636 4.1/4.2: plain challenge is the verifier itself
    if (!PLAIN_CHALLENGE.test(challenge)) {
      throw invalidRequest(
        'code_challenge must be 43-128 characters of [A-Za-z0-9-._~] for method plain (RFC 7636 4.1)',
      );
    }
    // D5: translate plain to S256 at the edge
    return {
      code_challenge: createHash('sha256').update(challenge, 'ascii').digest('base64url'),
      code_challenge_method: 'S256',
    };
  }
  // RFC 7636 4.2: S256 challenge is 43 base64url characters
  if (!S256_CHALLENGE.test(challenge)) {
    throw invalidRequest('code_challenge must be 43 base64url characters for method S256 (RFC 7636 4.2)');
  }
  return { code_challenge: challenge, code_challenge_method: 'S256' };
}
