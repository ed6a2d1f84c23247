import { createHash, timingSafeEqual } from 'node:crypto';
import type { ClientConfig } from '../config/schema.js';
import { invalidRequest, ProtocolError } from './errors.js';
import { isAbsent } from './text.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** the configured secret's digest, computed once per client */
const secretDigests = new WeakMap<ClientConfig, Buffer>();
function secretDigest(client: ClientConfig): Buffer {
  let digest = secretDigests.get(client);
  if (!digest) secretDigests.set(client, (digest = sha256(client.clientSecret)));
  return digest;
}

/**
 * The two methods a client with a secret may use, as discovery lists them: the interface's method first,
 * client_secret_basic beside it (RFC 6749 §2.3.1: a server MUST support it for clients with a password).
 */
export const CLIENT_AUTH_METHODS = ['client_secret_post', 'client_secret_basic'];

/**
 * The longest Authorization header value taken for client_secret_basic: room for a client_id of the
 * schema's 200 characters and a secret of several hundred, each form-urlencoded, in base64.
 */
export const MAX_BASIC_HEADER = 4096;

const unauthorised = (description: string) => new ProtocolError('unauthorised_client', description);
const HOW =
  'client_id and client_secret in the form (client_secret_post) or an Authorization: Basic header (client_secret_basic)';

/** RFC 4648 §4 base64, padded or not; base64url or stray characters are not base64. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** RFC 6749 §2.3.1 / Appendix B: each part was application/x-www-form-urlencoded before base64. */
function formDecode(part: string, name: 'client_id' | 'client_secret'): string {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    throw unauthorised(
      `Authorization: Basic: the ${name} is not valid application/x-www-form-urlencoded text (RFC 6749 section 2.3.1: percent-encode it as UTF-8)`,
    );
  }
}

/**
 * The client's credentials from an `Authorization: Basic` header (RFC 7617, RFC 6749 §2.3.1). Each way the
 * header can be wrong has its own description; none repeats what the header carried.
 */
export function basicCredentials(header: string): { clientId: string; secret: string } {
  if (header.length > MAX_BASIC_HEADER)
    throw unauthorised(`the Authorization header is longer than ${MAX_BASIC_HEADER} characters`);
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?: +(.*))?$/.exec(header.trim());
  if (!match || match[1].toLowerCase() !== 'basic')
    throw unauthorised(
      'the Authorization header must use the Basic scheme (client_secret_basic); other schemes do not authenticate a client here',
    );
  const token = (match[2] ?? '').trim();
  if (token === '') throw unauthorised('Authorization: Basic carries no credentials');
  const bytes = Buffer.from(token, 'base64');
  if (!BASE64.test(token) || bytes.toString('base64').replace(/=+$/, '') !== token.replace(/=+$/, ''))
    throw unauthorised('Authorization: Basic credentials are not valid base64 (RFC 7617)');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw unauthorised('Authorization: Basic credentials are not UTF-8 text (RFC 7617)');
  }
  const colon = text.indexOf(':');
  if (colon === -1)
    throw unauthorised('Authorization: Basic credentials have no colon between client_id and client_secret (RFC 7617)');
  const clientId = formDecode(text.slice(0, colon), 'client_id');
  const secret = formDecode(text.slice(colon + 1), 'client_secret');
  if (clientId === '') throw unauthorised('Authorization: Basic credentials carry an empty client_id');
  if (secret === '') throw unauthorised('Authorization: Basic credentials carry an empty client_secret');
  return { clientId, secret };
}

/**
 * The form a request authenticates with, whichever of the two methods it used: client_secret_basic's
 * credentials become the form's `client_id` and `client_secret`, so that everything after (the edge's
 * checks, oidc-provider, which knows one method per client) sees client_secret_post. RFC 6749 §2.3: one
 * method per request, so a secret in both places is invalid_request; a `client_id` in the form beside the
 * header must name the same client.
 */
export function clientCredentialsForm(
  params: Record<string, string>,
  authorization: string | undefined,
): Record<string, string> {
  if (params.client_assertion !== undefined || params.client_assertion_type !== undefined)
    throw unauthorised(`client_assertion (private_key_jwt, client_secret_jwt) is not supported; send ${HOW}`);
  if (authorization === undefined) return params;
  const { clientId, secret } = basicCredentials(authorization);
  if (params.client_secret !== undefined)
    throw invalidRequest(
      'the client authenticated twice: client_secret in the form and an Authorization: Basic header; use one method only (RFC 6749 section 2.3)',
    );
  if (params.client_id !== undefined && params.client_id !== clientId)
    throw invalidRequest('client_id in the form is not the client_id of the Authorization: Basic header');
  return { ...params, client_id: clientId, client_secret: secret };
}

/**
 * Client authentication at PAR and token (spec Authentication 1; Errors: ClientId / ClientSecret ->
 * unauthorised_client; D4), on the form `clientCredentialsForm` made of either method.
 */
export function authenticateClient(
  params: { client_id?: unknown; client_secret?: unknown },
  clients: ReadonlyMap<string, ClientConfig>,
): ClientConfig {
  // spec Endpoints: client_id required
  if (isAbsent(params.client_id) || typeof params.client_id !== 'string') {
    throw unauthorised(`client_id is required: the client authenticates with ${HOW}`);
  }
  // spec Errors: ClientId "Client not registered" -> unauthorised_client
  const client = clients.get(params.client_id);
  if (!client) throw unauthorised('client_id is not a registered client');
  // spec Errors: ClientSecret "Client authentication fails" -> unauthorised_client
  if (typeof params.client_secret !== 'string' || params.client_secret === '')
    throw unauthorised(`client authentication failed: client_secret is missing; send ${HOW}`);
  // compared in constant time over SHA-256 digests so neither content nor length leaks
  if (!timingSafeEqual(sha256(params.client_secret), secretDigest(client)))
    throw unauthorised('client authentication failed: client_secret is wrong for this client_id');
  return client;
}
