import { invalidRequest, ProtocolError } from './errors.js';

/** RFC 6750 §2.1: `Bearer` 1*SP b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** RFC 6750 §3.1: the token is malformed, expired, revoked or not ours: 401 invalid_token. */
export const invalidToken = (description: string) => new ProtocolError('invalid_token', description, 401);

/**
 * The access token of a request to a protected resource, from the Authorization header only (RFC 6750
 * §2.1). A token in the query or the form body (§2.2, §2.3) is refused with invalid_request: those ways
 * put it into logs, histories and caches, and §2 allows one method per request. Undefined when the request
 * carries no authentication at all (§3.1: then the answer has no error code).
 */
export function bearerToken(
  authorization: string | undefined,
  elsewhere: { query: boolean; body: boolean },
): string | undefined {
  const where = [elsewhere.query && 'the query', elsewhere.body && 'the form body'].filter(Boolean).join(' and ');
  if (where)
    throw invalidRequest(
      `access_token in ${where}: send the access token in the Authorization header only (Bearer, RFC 6750 section 2.1)`,
    );
  if (authorization === undefined) return undefined;
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?: +(.*))?$/.exec(authorization.trim());
  if (!match || match[1].toLowerCase() !== 'bearer')
    throw invalidRequest('the Authorization header must use the Bearer scheme (RFC 6750 section 2.1)');
  const token = (match[2] ?? '').trim();
  if (token === '') throw invalidRequest('Authorization: Bearer carries no access token');
  if (!B64TOKEN.test(token)) throw invalidToken('the access token is malformed (RFC 6750 section 2.1: b64token)');
  return token;
}
