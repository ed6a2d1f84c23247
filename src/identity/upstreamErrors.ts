import * as client from 'openid-client';

/**
 * D12, VerifiedIdentity_Other: every failure at the other identity provider as an UpstreamError whose
 * message is safe to send to the relying party as its error_description (src/identity/upstream.ts).
 */

/**
 * reason: 'unavailable' (discovery/network/timeout/5xx), 'refused' (the provider answered an error, e.g.
 * access_denied, or the person declined), 'invalid' (bad state, nonce, iss, aud, signature, expiry,
 * malformed answer). The message is plain words: never claim values, codes, tokens or the client secret.
 */
export class UpstreamError extends Error {
  constructor(
    readonly reason: 'unavailable' | 'refused' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export type Step = 'discovery' | 'token' | 'userinfo';

/** Errors of the authorization response that mean the provider cannot serve now rather than a refusal. */
const PROVIDER_DOWN_ERRORS = new Set(['server_error', 'temporarily_unavailable']);
/** Token endpoint errors about this service's own client registration there (a configuration problem). */
const CLIENT_ERRORS = new Set(['invalid_client', 'unauthorized_client']);

/** Text the provider chose, made safe for an error_description: printable ASCII only, bounded. */
function sanitise(text: unknown, max = 200): string {
  if (typeof text !== 'string') return '';
  return text
    .replace(/[^\x20-\x7E]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
}

/** The messages of an error and its causes, to tell openid-client's checks apart (never sent anywhere). */
function messages(err: unknown): string {
  const out: string[] = [];
  for (let e = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) out.push(e.message);
  return out.join(' | ');
}

/**
 * What went wrong, in plain words, from openid-client's errors. The provider's own error code and
 * description are quoted sanitised; nothing else it sent (codes, tokens, claims) is.
 */
export function classify(err: unknown, step: Step): UpstreamError {
  if (err instanceof UpstreamError) return err;
  // ours, from inside openid-client (its fetch: an answer over the size limit), wrapped by it
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof UpstreamError) return cause;
  const unavailable = (why = 'the identity provider is unavailable') => new UpstreamError('unavailable', why);
  const invalid = (why: string) => new UpstreamError('invalid', why);

  // the provider's error answer at the redirect (state already checked by openid-client)
  if (err instanceof client.AuthorizationResponseError) {
    const code = sanitise(err.error, 64) || 'an error';
    const description = sanitise(err.error_description);
    const message = `the identity provider answered ${code}${description ? `: ${description}` : ''}`;
    return new UpstreamError(PROVIDER_DOWN_ERRORS.has(err.error) ? 'unavailable' : 'refused', message);
  }
  // an OAuth error from the token or userinfo endpoint: in the body, or in a WWW-Authenticate challenge (401)
  if (err instanceof client.ResponseBodyError || err instanceof client.WWWAuthenticateChallengeError) {
    const error =
      err instanceof client.ResponseBodyError ? err.error : err.cause.find((c) => c.parameters.error)?.parameters.error;
    const code = sanitise(error, 64) || `HTTP ${err.status}`;
    if (err.status >= 500) return unavailable(`the identity provider is unavailable (HTTP ${err.status})`);
    if (step === 'token' && error && CLIENT_ERRORS.has(error))
      return unavailable(`the identity provider did not accept this service's client authentication (${code})`);
    if (step === 'token') return invalid(`the identity provider did not accept the authorization code (${code})`);
    return invalid(`the identity provider's ${step} endpoint answered ${code}`);
  }
  if (err instanceof client.ClientError) {
    const text = messages(err);
    switch (err.code) {
      case 'OAUTH_TIMEOUT':
      case 'OAUTH_ABORT':
        return unavailable('the identity provider did not answer in time');
      case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
      case 'OAUTH_REQUEST_PROTOCOL_FORBIDDEN':
        return unavailable('the identity provider is not reachable over https');
      case 'OAUTH_RESPONSE_IS_NOT_CONFORM': {
        const status = err.cause instanceof Response ? err.cause.status : undefined;
        if (step === 'discovery' || status === undefined || status >= 500)
          return unavailable(`the identity provider is unavailable${status ? ` (HTTP ${status})` : ''}`);
        return invalid(`the identity provider's ${step} endpoint answered with an unexpected HTTP status (${status})`);
      }
      case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
        return invalid("the identity provider's ID token has expired or is not yet valid");
      case 'OAUTH_KEY_SELECTION_FAILED':
        return invalid("the identity provider's ID token is signed with a key its JWKS does not hold");
      case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
        if (/"nonce"/.test(text))
          return invalid("the identity provider's ID token does not carry this journey's nonce");
        if (/"aud"|"azp"/.test(text))
          return invalid("the identity provider's ID token is not meant for this service (aud)");
        if (/"iss"/.test(text)) return invalid("the identity provider's ID token was issued by another issuer (iss)");
        return invalid("the identity provider's ID token does not match this journey");
    }
    if (step === 'discovery') return unavailable("the identity provider's discovery document could not be used");
    if (/signature/i.test(text)) return invalid("the identity provider's ID token signature does not verify");
    if (/"state"/.test(text))
      return invalid('the identity provider answered with a state that does not belong to this journey');
    if (/"iss"/.test(text)) return invalid('the identity provider answered with another issuer (iss)');
    if (/"sub"/.test(text))
      return invalid("the identity provider's userinfo is about another subject than its ID token");
    return invalid(`the identity provider's answer is malformed or could not be validated`);
  }
  // fetch's own failures (connection refused, DNS, reset) are TypeErrors; openid-client's argument checks carry ERR_INVALID_ARG_*
  if (err instanceof TypeError && !String((err as { code?: unknown }).code ?? '').startsWith('ERR_INVALID_ARG'))
    return unavailable();
  if (step === 'discovery') return unavailable();
  return invalid(`the identity provider's answer is malformed or could not be validated`);
}
